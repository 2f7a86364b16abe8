"""promptfoo's model-graded family: each grader asks its judge its question, passes as
promptfoo's does (measured against promptfoo 0.123.1: tests/conformance/promptfoo/
model_graded.yaml and negated.yaml run both tools), and reads the test's query and context."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.evaluators.base import EvaluationContext
from app.evaluators.registry import EVALUATORS
from app.evaluators.results import EvaluatorResult
from tests.evaluators.fakes import ScriptedTarget, verdict_json
from tests.suites.helpers import check, errors_by_path

CONTEXT = {"query": "Capital of France?", "context": "Paris is the capital of France."}


def checks_json(met: bool) -> str:
    return json.dumps({"checks": [{"id": "x", "satisfied": met, "reasoning": "r"}]})


async def grade(grader: dict[str, Any], judge: ScriptedTarget) -> EvaluatorResult:
    document = {
        "prompts": ["{{ q }}"],
        "providers": ["t"],
        "tests": [{"vars": {"q": "Say Paris", **CONTEXT}, "assert": [grader]}],
    }
    report = await check(document)
    assert report.suite is not None, report.errors
    case = report.suite.cases[0]
    context = EvaluationContext(
        case=case, question="Say Paris", candidate_answer="Paris", judge=judge, judge_attempts=1
    )
    return (await EVALUATORS.run(case.evaluators[0], context)).result


@pytest.mark.parametrize(
    ("grader", "score", "passed"),
    [
        ({"type": "g-eval", "value": "clear"}, 0.7, True),
        ({"type": "g-eval", "value": "clear"}, 0.6, False),
        ({"type": "g-eval", "value": "clear", "threshold": 0.5}, 0.6, True),
        ({"type": "not-g-eval", "value": "clear"}, 0.5, True),
        ({"type": "not-g-eval", "value": "clear"}, 0.8, False),
        ({"type": "context-faithfulness"}, 0.5, True),
        ({"type": "context-recall", "value": "Paris is the capital"}, 0.4, False),
        ({"type": "context-relevance", "threshold": 0.8}, 0.7, False),
        ({"type": "answer-relevance"}, 0.9, True),
        ({"type": "conversation-relevance"}, 0.4, False),
    ],
)
async def test_scored_graders_pass_from_promptfoos_marks(
    grader: dict[str, Any], score: float, passed: bool
) -> None:
    judge = ScriptedTarget(judge_replies=[verdict_json(score)])
    result = await grade(grader, judge)
    assert (result.type, result.passed) == (
        grader["type"].removeprefix("not-").replace("-", "_"),
        passed,
    )


async def test_the_questions_name_the_tests_query_context_and_value() -> None:
    judge = ScriptedTarget(judge_replies=[verdict_json(0.9)])
    await grade({"type": "context-recall", "value": "Paris is the capital"}, judge)
    [request] = judge.judge_requests()
    text = json.dumps([message.model_dump() for message in request.chat_prompt])
    for part in ("Paris is the capital of France.", "Paris is the capital", "share"):
        assert part in text


@pytest.mark.parametrize(("met", "passed"), [(True, True), (False, False)])
async def test_closedqa_and_factuality_are_met_or_not(met: bool, passed: bool) -> None:
    for kind in ("model-graded-closedqa", "factuality"):
        judge = ScriptedTarget(
            judge_replies=[json.dumps({"checks": [{"id": kind.replace("-", "_"), "satisfied": met,
                                                   "reasoning": "r"}], "reasoning": "r"})]
        )  # fmt: skip
        result = await grade({"type": kind, "value": "names Paris"}, judge)
        assert (result.passed, result.score) == (passed, 1.0 if met else 0.0)


async def test_a_context_grader_without_context_is_an_error_naming_it() -> None:
    document = {
        "prompts": ["{{ q }}"],
        "tests": [{"vars": {"q": "x"}, "assert": [{"type": "context-faithfulness"}]}],
    }
    report = await check(document)
    assert report.suite is not None
    case = report.suite.cases[0]
    context = EvaluationContext(
        case=case, question="x", candidate_answer="y", judge=ScriptedTarget(), judge_attempts=1
    )
    result = (await EVALUATORS.run(case.evaluators[0], context)).result
    assert result.status == "error"
    assert "vars.context" in (result.reasoning or "")


@pytest.mark.parametrize("kind", ["not-model-graded-closedqa", "not-factuality"])
async def test_the_not_forms_promptfoo_ignores_are_refused_by_name(kind: str) -> None:
    document = {
        "prompts": ["{{ q }}"],
        "tests": [{"vars": {"q": "x"}, "assert": [{"type": kind, "value": "v"}]}],
    }
    errors = errors_by_path(await check(document))
    assert "its not- is ignored" in errors["tests[0].assert[0].type"]


async def test_a_context_transform_makes_the_context_from_the_answer() -> None:
    judge = ScriptedTarget(judge_replies=[verdict_json(0.9)])
    grader = {"type": "context-faithfulness", "contextTransform": "'From ' + output + '.'"}
    result = await grade(grader, judge)
    assert result.passed is True
    [request] = judge.judge_requests()
    assert "Context: From Paris." in json.dumps([m.model_dump() for m in request.chat_prompt])
