"""Two runs compared case by case, and whether the difference is more than noise. Pure.

Cases are paired by ``eval_id``. A case regressed when its status got worse (passed >
borderline > failed > an error), or, with the same status, when its score went down;
improved the other way round. The summary pairs the scores of the cases graded in both runs:
the mean paired difference (head minus base), its confidence interval and the p-value of a
paired t-test (``scipy.stats.ttest_rel``), so a change can be told from noise.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from app.evaluators.results import CaseStatus, Verdict

Change = Literal["regression", "improvement", "unchanged"]
CONFIDENCE = 0.95
SIGNIFICANCE_LEVEL = 0.05
_STATUS_RANK: dict[str, int] = {
    "passed": 3,
    "borderline": 2,
    "failed": 1,
    "judge_error": 0,
    "error": 0,
}
_ORDER: dict[Change, int] = {"regression": 0, "improvement": 1, "unchanged": 2}


class CaseOutcome(BaseModel):
    """How one case came out in one run."""

    status: CaseStatus
    score: float | None = None
    verdict: Verdict | None = None


class AnswerPair(BaseModel):
    """The candidate's answers to one case in both runs."""

    base: str | None = None
    head: str | None = None


class CaseComparison(BaseModel):
    """One shared case in both runs."""

    eval_id: str = Field(examples=["refund-policy"])
    change: Change
    base: CaseOutcome
    head: CaseOutcome
    score_delta: float | None = Field(
        None, description="Head score minus base score (null unless both were scored)."
    )
    verdict_changed: bool = False
    answers: AnswerPair | None = Field(None, description="Only in the viewer's comparison.")


class PairedDifference(BaseModel):
    """The mean of the paired score differences (head minus base) and its uncertainty."""

    pairs: int = Field(description="Cases scored in both runs.", examples=[40])
    mean_difference: float | None = Field(None, examples=[-0.125])
    ci_low: float | None = Field(None, description="Lower end of the confidence interval.")
    ci_high: float | None = Field(None, description="Upper end of the confidence interval.")
    confidence: float = CONFIDENCE
    test: Literal["paired t-test"] = "paired t-test"
    p_value: float | None = Field(None, examples=[0.003])
    significant: bool = Field(
        False, description=f"Whether p < {SIGNIFICANCE_LEVEL}: a change rather than noise."
    )


def classify(base: CaseOutcome, head: CaseOutcome) -> Change:
    """Whether the case got worse, better, or stayed as it was."""
    rank = _STATUS_RANK[head.status] - _STATUS_RANK[base.status]
    if rank:
        return "regression" if rank < 0 else "improvement"
    delta = _delta(base, head)
    if delta is None or math.isclose(delta, 0.0, abs_tol=1e-12):
        return "unchanged"
    return "regression" if delta < 0 else "improvement"


def _delta(base: CaseOutcome, head: CaseOutcome) -> float | None:
    if base.score is None or head.score is None:
        return None
    return head.score - base.score


def compare_cases(
    base: Mapping[str, CaseOutcome], head: Mapping[str, CaseOutcome], order: Sequence[str]
) -> list[CaseComparison]:
    """The cases of ``order`` (ids present in both runs), sorted for review.

    Regressions first, worst first; then improvements, best first; then unchanged ones in
    ``order``.
    """
    rows = []
    for eval_id in order:
        before, after = base[eval_id], head[eval_id]
        rows.append(
            CaseComparison(
                eval_id=eval_id,
                change=classify(before, after),
                base=before,
                head=after,
                score_delta=_delta(before, after),
                verdict_changed=before.verdict != after.verdict,
            )
        )
    return sorted(rows, key=_sort_key)


def _sort_key(row: CaseComparison) -> tuple[int, float]:
    if row.change == "unchanged":
        return (_ORDER[row.change], 0.0)
    rank = _STATUS_RANK[row.head.status] - _STATUS_RANK[row.base.status]
    size = abs(rank) * 10 + abs(row.score_delta or 0.0)
    return (_ORDER[row.change], -size)


def paired_difference(base: Sequence[float], head: Sequence[float]) -> PairedDifference:
    """Mean of ``head[i] - base[i]``, its confidence interval and a paired t-test.

    With fewer than two pairs nothing but the mean is known. When every difference is the
    same the t statistic is undefined: the interval is that single value, and the change is
    significant unless it is zero.
    """
    differences = [after - before for before, after in zip(base, head, strict=True)]
    if not differences:
        return PairedDifference(pairs=0)
    mean = statistics.fmean(differences)
    if len(differences) < 2:
        return PairedDifference(pairs=1, mean_difference=mean)
    if max(differences) - min(differences) < 1e-12:
        exact = math.isclose(mean, 0.0, abs_tol=1e-12)
        return PairedDifference(
            pairs=len(differences),
            mean_difference=mean,
            ci_low=mean,
            ci_high=mean,
            p_value=1.0 if exact else 0.0,
            significant=not exact,
        )
    # scipy (with numpy) takes about a second to import: only a comparison with varying
    # differences needs it, so the service and every process it starts load it on first use.
    from scipy import stats

    result = stats.ttest_rel(list(head), list(base))
    interval = result.confidence_interval(confidence_level=CONFIDENCE)
    p_value = float(result.pvalue)
    return PairedDifference(
        pairs=len(differences),
        mean_difference=mean,
        ci_low=float(interval.low),
        ci_high=float(interval.high),
        p_value=p_value,
        significant=p_value < SIGNIFICANCE_LEVEL,
    )
