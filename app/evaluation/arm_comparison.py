"""Every pair of a run's arms compared, with Holm's correction for the number of pairs. Pure.

Each pair is compared as two runs are (``comparison``): cases paired by id, the paired
t-test on the cases scored in both arms. With k arms there are k(k-1)/2 tests, so some
would come out "significant" by chance; Holm's step-down method adjusts the p-values so
that the chance of any false "significant" among them stays under the level (5%).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Literal

from pydantic import BaseModel, Field

from app.evaluation.arms import RunArm
from app.evaluation.comparison import (
    SIGNIFICANCE_LEVEL,
    CaseOutcome,
    PairedDifference,
    compare_cases,
    paired_difference,
)

PairVerdict = Literal["head_better", "base_better", "no_difference"]


class ArmPairComparison(BaseModel):
    """``head`` arm against ``base`` arm on the cases both have a record of."""

    base: RunArm
    head: RunArm
    shared: int = Field(description="Cases with a record in both arms.")
    regression: int = Field(0, description="Cases worse in head than in base.")
    improvement: int = Field(0, description="Cases better in head than in base.")
    unchanged: int = 0
    difference: PairedDifference = Field(description="Paired t-test, p-value uncorrected.")
    p_holm: float | None = Field(
        None, description="The p-value adjusted for every pair of the run (Holm)."
    )
    significant: bool = Field(
        False, description=f"Whether the Holm-adjusted p < {SIGNIFICANCE_LEVEL}."
    )
    verdict: PairVerdict = Field(description="Which arm scored higher, if more than noise.")
    summary: str = Field(description="The verdict in plain words.")


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values, in the order given (None stays None).

    The i-th smallest of m p-values is multiplied by m - i (i from 0), kept monotone and
    capped at 1.
    """
    known = sorted((p, index) for index, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(known):
        running = max(running, min(1.0, (len(known) - rank) * p))
        adjusted[index] = running
    return adjusted


def compare_arms(
    arms: Sequence[RunArm], outcomes: Mapping[int, Mapping[str, CaseOutcome]]
) -> list[ArmPairComparison]:
    """Every pair (earlier arm as base) compared; ``outcomes`` by arm index, then case id."""
    pairs = []
    for base, head in combinations(arms, 2):
        before, after = outcomes.get(base.index, {}), outcomes.get(head.index, {})
        shared = [eval_id for eval_id in before if eval_id in after]
        rows = compare_cases(before, after, shared)
        scored = [row for row in rows if row.score_delta is not None]
        difference = paired_difference(
            [row.base.score or 0.0 for row in scored], [row.head.score or 0.0 for row in scored]
        )
        counts = {change: sum(row.change == change for row in rows) for change in _CHANGES}
        pairs.append((base, head, len(shared), counts, difference))
    adjusted = holm([difference.p_value for *_, difference in pairs])
    return [
        _pair(base, head, shared, counts, difference, p_holm)
        for (base, head, shared, counts, difference), p_holm in zip(pairs, adjusted, strict=True)
    ]


_CHANGES = ("regression", "improvement", "unchanged")


def _pair(
    base: RunArm,
    head: RunArm,
    shared: int,
    counts: dict[str, int],
    difference: PairedDifference,
    p_holm: float | None,
) -> ArmPairComparison:
    significant = p_holm is not None and p_holm < SIGNIFICANCE_LEVEL
    mean = difference.mean_difference or 0.0
    verdict: PairVerdict = "no_difference"
    if significant:
        verdict = "head_better" if mean > 0 else "base_better"
    return ArmPairComparison(
        base=base,
        head=head,
        shared=shared,
        **counts,
        difference=difference,
        p_holm=p_holm,
        significant=significant,
        verdict=verdict,
        summary=_summary(base, head, verdict, difference, p_holm),
    )


def _summary(
    base: RunArm,
    head: RunArm,
    verdict: PairVerdict,
    difference: PairedDifference,
    p_holm: float | None,
) -> str:
    if difference.pairs < 2 or p_holm is None:
        return f"{head.label} vs {base.label}: too few cases scored in both to tell"
    mean = abs(difference.mean_difference or 0.0)
    if verdict == "no_difference":
        return (
            f"{head.label} vs {base.label}: no significant difference "
            f"(mean {difference.mean_difference:+.3f}, Holm p = {p_holm:.3g})"
        )
    better, worse = (head, base) if verdict == "head_better" else (base, head)
    return (
        f"{better.label} scores higher than {worse.label} by {mean:.3f} on average "
        f"(Holm p = {p_holm:.3g}, {difference.pairs} cases)"
    )
