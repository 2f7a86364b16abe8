"""A run's summary, built from the stored result columns with the evaluation layer's builder.

Only status, score and tokens are read back (not whole records), so summarising a large run
stays cheap; the shape is the very ``RunSummary`` that ``/evaluate`` answers with.
"""

from __future__ import annotations

from typing import Any, cast

from app.evaluation.records import RoleUsage, TokenUsage
from app.evaluation.summary import RunSummary, SummaryBuilder
from app.evaluators.results import CaseStatus
from app.runs.models import ResultFacts


def summarize_results(facts: ResultFacts) -> RunSummary:
    """The summary of a run's stored results."""
    builder = SummaryBuilder()
    builder.add_outcomes(cast(list[tuple[CaseStatus, float | None]], facts.outcomes))
    builder.add_usage(
        RoleUsage(
            candidate=TokenUsage(
                input_tokens=facts.candidate_input_tokens,
                output_tokens=facts.candidate_output_tokens,
            ),
            judge=TokenUsage(
                input_tokens=facts.judge_input_tokens, output_tokens=facts.judge_output_tokens
            ),
        )
    )
    return builder.summary()


def summary_document(facts: ResultFacts) -> dict[str, Any]:
    """The summary as a JSON-ready dict (as stored on a finished run)."""
    return summarize_results(facts).model_dump(mode="json")
