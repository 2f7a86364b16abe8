"""A run's summary from stored columns has the shape and figures of ``/evaluate``'s."""

from __future__ import annotations

from app.evaluation.records import ResultRecord
from app.evaluation.summary import summarize
from app.evaluators.results import EvaluatorResult
from app.runs.models import ResultFacts
from app.runs.summary import graders_column, summarize_results
from tests.runs.builders import make_record


def test_summary_from_stored_columns_equals_the_summary_of_the_records() -> None:
    records = [
        make_record("a", score=1.0),
        make_record("b", status="failed", score=0.3),
        make_record("c", status="borderline", score=0.7),
        make_record("d", status="error", score=None),
    ]
    facts = ResultFacts(
        outcomes=[(r.status, r.score, graders_column(r), 1) for r in records],
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


def test_outcomes_shared_by_many_results_count_once_per_result() -> None:
    def graded(record: ResultRecord, passed: bool) -> ResultRecord:
        result = EvaluatorResult(
            name="mentions-refund", type="contains", score=float(passed), verdict=None,
            passed=passed,
        )  # fmt: skip
        return record.model_copy(update={"evaluator_results": [result]})

    records = [graded(make_record(f"p{i}", score=1.0), True) for i in range(3)] + [
        graded(make_record("f", status="failed", score=0.2), False)
    ]
    passed, failed = records[0], records[-1]
    facts = ResultFacts(
        outcomes=[
            (passed.status, passed.score, graders_column(passed), 3),
            (failed.status, failed.score, graders_column(failed), 1),
        ]
    )
    summary = summarize_results(facts)
    expected = summarize(records)
    assert summary.counts == expected.counts
    assert summary.scores == expected.scores
    assert summary.histogram == expected.histogram
    assert summary.graders == expected.graders
    assert summary.graders["mentions-refund"].passed == 3
