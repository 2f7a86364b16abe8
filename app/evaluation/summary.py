"""A run's summary: counts per status, score statistics, a histogram and token usage.

``SummaryBuilder`` takes records one at a time, so a run in progress can show the summary
of the cases finished so far; ``summarize`` builds one from a finished list.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Iterable

from pydantic import BaseModel, Field

from app.evaluation.records import ResultRecord, RoleUsage
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


class RunSummary(BaseModel):
    """What a run came to, over the cases finished so far."""

    total: int = Field(0, description="Cases with a record.")
    counts: dict[CaseStatus, int] = Field(
        default_factory=lambda: dict.fromkeys(STATUSES, 0),
        examples=[{"passed": 1, "borderline": 0, "failed": 0, "judge_error": 0, "error": 0}],
    )
    scores: ScoreStats = Field(default_factory=ScoreStats)
    histogram: list[HistogramBin] = Field(default_factory=list)
    usage: RoleUsage = Field(default_factory=RoleUsage, description="Tokens per role, summed.")


def _bin_index(score: float) -> int:
    return min(int(score * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)


class SummaryBuilder:
    """Accumulates records into a ``RunSummary``; each ``add`` is O(log n) plus an insert."""

    def __init__(self) -> None:
        self._counts: dict[CaseStatus, int] = dict.fromkeys(STATUSES, 0)
        self._scores: list[float] = []
        self._bins = [0] * HISTOGRAM_BINS
        self._usage = RoleUsage()

    def add(self, record: ResultRecord) -> None:
        """Count one case's record."""
        self._counts[record.status] += 1
        if record.score is not None:
            bisect.insort(self._scores, record.score)
            self._bins[_bin_index(record.score)] += 1
        for role in ("candidate", "judge"):
            total = getattr(self._usage, role)
            tokens = getattr(record.usage, role)
            total.input_tokens += tokens.input_tokens
            total.output_tokens += tokens.output_tokens

    def add_outcomes(self, outcomes: Iterable[tuple[CaseStatus, float | None]]) -> None:
        """Count many cases' statuses and scores at once (tokens are added separately).

        The stored summary of a large run is built from these two columns only; sorting once
        costs far less than an ``add`` per record.
        """
        added: list[float] = []
        for status, score in outcomes:
            self._counts[status] += 1
            if score is not None:
                added.append(score)
                self._bins[_bin_index(score)] += 1
        self._scores = sorted(self._scores + added)

    def add_usage(self, usage: RoleUsage) -> None:
        """Add token totals (summed elsewhere, e.g. in SQL)."""
        for role in ("candidate", "judge"):
            total, tokens = getattr(self._usage, role), getattr(usage, role)
            total.input_tokens += tokens.input_tokens
            total.output_tokens += tokens.output_tokens

    def summary(self) -> RunSummary:
        """The summary of every record added so far."""
        return RunSummary(
            total=sum(self._counts.values()),
            counts=dict(self._counts),
            scores=self._stats(),
            histogram=[
                HistogramBin(low=i / HISTOGRAM_BINS, high=(i + 1) / HISTOGRAM_BINS, count=count)
                for i, count in enumerate(self._bins)
            ],
            usage=self._usage.model_copy(deep=True),
        )

    def _stats(self) -> ScoreStats:
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
