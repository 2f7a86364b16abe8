"""Agent Skills ``evals.json`` files read as AgentV 4.42.4 runs them (measured by the harness)."""

from __future__ import annotations

from app.evaluators.config import DEFAULT_EVALUATOR
from tests.suites.helpers import check

EVALS = {
    "skill_name": "csv-analyzer",
    "evals": [
        {
            "id": 1,
            "prompt": "Find the top 3 months by revenue.",
            "expected_output": "November, September and December.",
            "files": ["evals/files/sales.csv"],
            "should_trigger": True,
            "assertions": ["Names November first", "Gives 3 months"],
        },
        {"id": 2, "prompt": "What time is it?", "should_trigger": False},
    ],
}


async def test_each_eval_is_a_test_with_its_prompt_expected_answer_and_judges() -> None:
    report = await check(EVALS)
    assert report.valid, report.errors
    assert report.suite is not None
    first, second = report.suite.cases
    assert first.id == "1"
    assert [m.role for m in first.input_messages] == ["user"]
    assert first.expected_outcome == "November, September and December."
    assert first.reference_answer == "November, September and December."
    judges = [(g.name, g.type) for g in first.evaluators]
    assert judges == [("assertion-1", "llm_judge"), ("assertion-2", "llm_judge")]
    assert [g.prompt for g in first.evaluators] == ["Names November first", "Gives 3 months"]
    # Neither expected answer nor assertions: AgentV's default judge grades the answer alone.
    assert second.id == "2"
    assert second.expected_outcome == ""
    assert second.evaluators == (DEFAULT_EVALUATOR,)


async def test_files_and_should_trigger_are_named_in_warnings_not_dropped_unsaid() -> None:
    report = await check(EVALS)
    for where in ("tests[0].files", "tests[0].should_trigger", "tests[1].should_trigger"):
        assert any(warning.startswith(f"{where}:") for warning in report.warnings), where


async def test_a_malformed_eval_is_an_error_naming_it() -> None:
    report = await check({"skill_name": "x", "evals": [{"id": 1, "prompt": 3}]})
    assert not report.valid
    assert any(error.path.startswith("tests[0].input") for error in report.errors)
