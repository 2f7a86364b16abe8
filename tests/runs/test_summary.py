"""A run's summary from stored columns has the shape and figures of ``/evaluate``'s."""

from __future__ import annotations

from app.evaluation.summary import summarize
from app.runs.models import ResultFacts
from app.runs.summary import summarize_results
from tests.runs.builders import make_record


def test_summary_from_stored_columns_equals_the_summary_of_the_records() -> None:
    records = [
        make_record("a", score=1.0),
        make_record("b", status="failed", score=0.3),
        make_record("c", status="borderline", score=0.7),
        make_record("d", status="error", score=None),
    ]
    facts = ResultFacts(
        outcomes=[(r.status, r.score) for r in records],
        candidate_input_tokens=40,
        candidate_output_tokens=20,
        judge_input_tokens=80,
        judge_output_tokens=12,
    )
    assert summarize_results(facts) == summarize(records)


def test_summary_of_no_results_is_empty() -> None:
    summary = summarize_results(ResultFacts(outcomes=[]))
    assert summary.total == 0
    assert summary.scores.mean is None
