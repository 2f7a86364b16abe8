"""A run's summary, built from the stored result columns with the evaluation layer's builder.

Only status, score and tokens are read back (not whole records), so summarising a large run
stays cheap; the shape is the very ``RunSummary`` that ``/evaluate`` answers with.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from app.evaluation.records import ResultRecord, RoleUsage, TokenUsage
from app.evaluation.summary import RunSummary, SummaryBuilder
from app.runs.models import ResultFacts


@dataclass(frozen=True)
class _Counted:
    """The three fields of a record that ``SummaryBuilder.add`` reads."""

    status: str
    score: float | None
    usage: RoleUsage


def _as_record(fact: ResultFacts) -> ResultRecord:
    usage = RoleUsage(
        candidate=TokenUsage(
            input_tokens=fact.candidate_input_tokens, output_tokens=fact.candidate_output_tokens
        ),
        judge=TokenUsage(
            input_tokens=fact.judge_input_tokens, output_tokens=fact.judge_output_tokens
        ),
    )
    # Building full records (even with model_construct) costs far more than the summary itself.
    return cast(ResultRecord, _Counted(status=fact.status, score=fact.score, usage=usage))


def summarize_results(facts: Iterable[ResultFacts]) -> RunSummary:
    """The summary of a run's stored results."""
    builder = SummaryBuilder()
    for fact in facts:
        builder.add(_as_record(fact))
    return builder.summary()


def summary_document(facts: Iterable[ResultFacts]) -> dict[str, Any]:
    """The summary as a JSON-ready dict (as stored on a finished run)."""
    return summarize_results(facts).model_dump(mode="json")
