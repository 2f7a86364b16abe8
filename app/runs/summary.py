"""A run's summary, built from the stored result columns with the evaluation layer's builder.

Only status, score and tokens are read back (not whole records), so summarising a large run
stays cheap; the shape is the very ``RunSummary`` that ``/evaluate`` answers with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from app.evaluation.records import ResultRecord, RoleUsage, TokenUsage
from app.evaluation.summary import RunSummary, SummaryBuilder
from app.runs.models import ResultFacts


@dataclass(frozen=True)
class _Outcome:
    """The fields of a record ``SummaryBuilder.add`` reads (tokens are summed in SQL)."""

    status: str
    score: float | None
    usage: RoleUsage


_NO_TOKENS = RoleUsage()


def summarize_results(facts: ResultFacts) -> RunSummary:
    """The summary of a run's stored results."""
    builder = SummaryBuilder()
    for status, score in facts.outcomes:
        # Full records (even unvalidated) would cost far more than the summary itself.
        builder.add(cast(ResultRecord, _Outcome(status, score, _NO_TOKENS)))
    summary = builder.summary()
    summary.usage = RoleUsage(
        candidate=TokenUsage(
            input_tokens=facts.candidate_input_tokens,
            output_tokens=facts.candidate_output_tokens,
        ),
        judge=TokenUsage(
            input_tokens=facts.judge_input_tokens, output_tokens=facts.judge_output_tokens
        ),
    )
    return summary


def summary_document(facts: ResultFacts) -> dict[str, Any]:
    """The summary as a JSON-ready dict (as stored on a finished run)."""
    return summarize_results(facts).model_dump(mode="json")
