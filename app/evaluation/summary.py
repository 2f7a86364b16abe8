"""A run's summary: counts per status, score statistics, a histogram, tokens, pass rate per grader.

``SummaryBuilder`` takes records one at a time, so a run in progress can show the summary
of the cases finished so far; ``summarize`` builds one from a finished list.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from app.evaluation.arms import RunArm
from app.evaluation.records import ResultRecord, RoleUsage
from app.evaluators.code.derived_metrics import DerivedMetrics, derived_values
from app.evaluators.code.js_engine import run_in_thread
from app.evaluators.results import CaseStatus

STATUSES: tuple[CaseStatus, ...] = ("passed", "borderline", "failed", "judge_error", "error")
HISTOGRAM_BINS = 5


class ScoreStats(BaseModel):
    """Statistics of the scores of graded cases (``None`` when no case has a score)."""

    count: int = 0
    mean: float | None = None
    median: float | None = None
    min: float | None = None
    max: float | None = None
    std_dev: float | None = Field(
        None, description="Sample standard deviation (0 for a single score)."
    )


class HistogramBin(BaseModel):
    """Scores in ``[low, high)`` (the last bin includes 1.0)."""

    low: float
    high: float
    count: int = 0


GraderFact = tuple[str, str, bool | None, float | None]
"""One grader's outcome on one case: name, type, passed (None: it could not grade), score."""


class GraderStats(BaseModel):
    """How one grader (by name) did over the cases that declare it."""

    type: str
    count: int = Field(0, description="Cases the grader ran on.")
    passed: int = Field(0, description="Cases where it passed.")
    failed: int = Field(0, description="Cases where it graded and did not pass.")
    errors: int = Field(0, description="Cases where it could not grade.")
    pass_rate: float | None = Field(
        None, description="passed / (passed + failed); null when it never graded."
    )
    mean_score: float | None = Field(None, description="Mean of its scores.")


def grader_facts(record: ResultRecord) -> list[GraderFact]:
    """The top-level graders' outcomes of a record (composites count as one grader).

    A live conversation's turns' graders count too, each named ``turn N: name``.
    """
    named = [(result.name, result) for result in record.evaluator_results]
    for turn in record.turns or ():
        named += [(f"turn {turn.turn}: {result.name}", result) for result in turn.evaluator_results]
    return [
        (name, result.type, result.passed if result.status == "ok" else None, result.score)
        for name, result in named
    ]


class RunSummary(BaseModel):
    """What a run came to, over the cases finished so far."""

    total: int = Field(0, description="Cases with a record.")
    counts: dict[CaseStatus, int] = Field(
        default_factory=lambda: dict.fromkeys(STATUSES, 0),
        examples=[{"passed": 1, "borderline": 0, "failed": 0, "judge_error": 0, "error": 0}],
    )
    scores: ScoreStats = Field(default_factory=ScoreStats)
    ungraded: int = Field(
        0,
        description=(
            "Cases that ran with no grader (a promptfoo test with no assertions): passed, "
            "their answers kept, not graded."
        ),
    )
    histogram: list[HistogramBin] = Field(default_factory=list)
    reviewed: int = Field(
        0,
        description="Cases a person gave a verdict: counts, scores and the histogram use "
        "theirs (`PUT /runs/{id}/cases/{seq}/review`).",
    )
    usage: RoleUsage = Field(default_factory=RoleUsage, description="Tokens per role, summed.")
    graders: dict[str, GraderStats] = Field(
        default_factory=dict,
        description="Pass rate and mean score of each grader, by its name.",
        examples=[
            {
                "mentions-refund": {
                    "type": "contains",
                    "count": 2,
                    "passed": 1,
                    "failed": 1,
                    "errors": 0,
                    "pass_rate": 0.5,
                    "mean_score": 0.5,
                }
            }
        ],
    )
    arms: list[ArmSummary] | None = Field(
        None,
        description=(
            "A run on several targets: the summary of each arm (the fields above are the "
            "whole run's); null for a run on one target."
        ),
    )
    named_scores: dict[str, float | None] | None = Field(
        None,
        description=(
            "A promptfoo suite with derivedMetrics: each metric's named score (the sum of "
            "score x weight of the asserts naming it) and each derived metric computed from "
            "them (null: not a finite number); null for other suites."
        ),
    )


class ArmSummary(BaseModel):
    """The summary of one arm of a run on several targets."""

    arm: RunArm
    summary: RunSummary


RunSummary.model_rebuild()


def _bin_index(score: float) -> int:
    return min(int(score * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)


class SummaryBuilder:
    """Accumulates records into a ``RunSummary`` (scores are sorted once, when summarised)."""

    def __init__(self) -> None:
        self._counts: dict[CaseStatus, int] = dict.fromkeys(STATUSES, 0)
        self._scores: list[float] = []
        self._bins = [0] * HISTOGRAM_BINS
        self._usage = RoleUsage()
        self._graders: dict[str, GraderStats] = {}
        self._grader_scores: dict[str, list[float]] = {}
        self._ungraded = 0
        self._arms: dict[int, tuple[RunArm, SummaryBuilder]] = {}

    def add(self, record: ResultRecord) -> None:
        """Count one case's record (and, for a run with arms, in its arm's summary too)."""
        if record.arm is not None:
            arm = self._arms.setdefault(record.arm.index, (record.arm, SummaryBuilder()))
            arm[1].add(record.model_copy(update={"arm": None}))
        self.count(record.status, record.score, grader_facts(record))
        if record.status == "passed" and record.score is None and not record.evaluator_results:
            self._ungraded += 1
        for role in ("candidate", "judge"):
            total = getattr(self._usage, role)
            tokens = getattr(record.usage, role)
            total.input_tokens += tokens.input_tokens
            total.output_tokens += tokens.output_tokens

    def count(
        self,
        status: CaseStatus,
        score: float | None,
        graders: Sequence[GraderFact] = (),
        *,
        times: int = 1,
    ) -> None:
        """Count ``times`` cases by their status, score and graders' outcomes (not tokens)."""
        self._counts[status] += times
        if score is not None:
            self._scores.extend([score] * times)
            self._bins[_bin_index(score)] += times
        for name, kind, passed, grader_score in graders:
            stats = self._graders.setdefault(name, GraderStats(type=kind))
            stats.count += times
            if passed is None:
                stats.errors += times
            elif passed:
                stats.passed += times
            else:
                stats.failed += times
            if grader_score is not None:
                self._grader_scores.setdefault(name, []).extend([grader_score] * times)

    def summary(self) -> RunSummary:
        """The summary of every record added so far."""
        return RunSummary(
            total=sum(self._counts.values()),
            counts=dict(self._counts),
            scores=self._stats(),
            ungraded=self._ungraded,
            histogram=[
                HistogramBin(low=i / HISTOGRAM_BINS, high=(i + 1) / HISTOGRAM_BINS, count=count)
                for i, count in enumerate(self._bins)
            ],
            usage=self._usage.model_copy(deep=True),
            graders={
                name: self._grader_stats(name, stats) for name, stats in self._graders.items()
            },
            arms=[
                ArmSummary(arm=arm, summary=builder.summary())
                for _, (arm, builder) in sorted(self._arms.items())
            ]
            or None,
        )

    async def summary_with(self, derived: DerivedMetrics | None) -> RunSummary:
        """``summary()``, with the named scores and derived metrics of ``derived``.

        promptfoo's ``derivedMetrics``, for the run and each arm, computed in the JavaScript
        engine.
        """
        summary = self.summary()
        if derived is None:
            return summary
        sums = {name: math.fsum(scores) for name, scores in self._grader_scores.items()}
        summary.named_scores = await run_in_thread(derived_values, derived, sums)
        for arm_summary, (_, (_, arm_builder)) in zip(
            summary.arms or (), sorted(self._arms.items()), strict=True
        ):
            arm_sums = {n: math.fsum(s) for n, s in arm_builder._grader_scores.items()}
            arm_summary.summary.named_scores = await run_in_thread(
                derived_values, derived, arm_sums
            )
        return summary

    def _grader_stats(self, name: str, stats: GraderStats) -> GraderStats:
        graded = stats.passed + stats.failed
        scores = self._grader_scores.get(name)
        return stats.model_copy(
            update={
                "pass_rate": stats.passed / graded if graded else None,
                "mean_score": statistics.fmean(scores) if scores else None,
            }
        )

    def _stats(self) -> ScoreStats:
        self._scores.sort()
        scores = self._scores
        if not scores:
            return ScoreStats()
        return ScoreStats(
            count=len(scores),
            mean=statistics.fmean(scores),
            median=statistics.median(scores),
            min=scores[0],
            max=scores[-1],
            std_dev=statistics.stdev(scores) if len(scores) > 1 else 0.0,
        )


def summarize(records: Iterable[ResultRecord]) -> RunSummary:
    """The summary of ``records``."""
    builder = SummaryBuilder()
    for record in records:
        builder.add(record)
    return builder.summary()
