"""A run's summary, built from the stored result columns with the evaluation layer's builder.

Only status, score, the graders' outcomes and tokens are read back (not whole records), so
summarising a large run stays cheap; the shape is the very ``RunSummary`` that ``/evaluate``
answers with.
"""

from __future__ import annotations

import json
from typing import Any, cast

import orjson

from app.evaluation.records import ResultRecord, RoleUsage, TokenUsage
from app.evaluation.summary import ArmSummary, GraderFact, RunSummary, SummaryBuilder, grader_facts
from app.evaluators.code.derived_metrics import DerivedMetrics
from app.evaluators.results import CaseStatus
from app.runs.models import ResultFacts


def graders_column(record: ResultRecord) -> str:
    """The ``results.graders`` column of a record: its graders' outcomes as compact JSON."""
    return orjson.dumps(grader_facts(record)).decode()


def target_usage_column(record: ResultRecord) -> str:
    """The ``results.target_usage`` column: ``{target: [requests, input, output]}``."""
    return orjson.dumps(
        {
            name: [used.requests, used.input_tokens, used.output_tokens]
            for name, used in record.usage_by_target.items()
        }
    ).decode()


def read_target_usage(column: str | None) -> dict[str, tuple[int, int, int]]:
    """The requests and tokens per target kept in a ``results.target_usage`` column."""
    if not column:
        return {}
    return {
        str(name): (int(requests), int(tokens_in), int(tokens_out))
        for name, (requests, tokens_in, tokens_out) in json.loads(column).items()
    }


def read_graders(column: str | None) -> list[GraderFact]:
    """The graders' outcomes kept in a ``results.graders`` column."""
    if not column:
        return []
    return [(str(n), str(t), p, s) for n, t, p, s in json.loads(column)]


def summarize_results(facts: ResultFacts) -> RunSummary:
    """The summary of a run's stored results."""
    return _summary(facts, _builder(facts).summary())


def _builder(facts: ResultFacts) -> SummaryBuilder:
    builder = SummaryBuilder()
    for status, score, column, times in facts.outcomes:
        builder.count(cast(CaseStatus, status), score, read_graders(column), times=times)
    return builder


def _summary(facts: ResultFacts, summary: RunSummary) -> RunSummary:
    summary.reviewed = facts.reviewed
    summary.usage = RoleUsage(
        candidate=TokenUsage(
            input_tokens=facts.candidate_input_tokens,
            output_tokens=facts.candidate_output_tokens,
        ),
        judge=TokenUsage(
            input_tokens=facts.judge_input_tokens, output_tokens=facts.judge_output_tokens
        ),
    )
    if facts.arms:
        summary.arms = [
            ArmSummary(arm=arm, summary=summarize_results(arm_facts))
            for arm, arm_facts in facts.arms
        ]
    return summary


async def summary_document(facts: ResultFacts, spec: dict[str, Any]) -> dict[str, Any]:
    """The summary as a JSON-ready dict (as stored on a finished run).

    ``spec``: the run's stored specification; a suite's ``derived_metrics`` (promptfoo's
    ``derivedMetrics``) are computed over the run and each arm.
    """
    raw = (spec.get("suite") or {}).get("derived_metrics")
    if raw is None:
        return summarize_results(facts).model_dump(mode="json")
    derived = DerivedMetrics.model_validate(raw)
    summary = _summary(facts, await _builder(facts).summary_with(derived))
    for arm_summary, (_, arm_facts) in zip(summary.arms or (), facts.arms, strict=True):
        named = (await _builder(arm_facts).summary_with(derived)).named_scores
        arm_summary.summary.named_scores = named
    return summary.model_dump(mode="json")
