"""promptfoo's semantics (issue 36), each measured against promptfoo 0.123.1 by the harness.

The configs are read as promptfoo files (the prompts/providers/vars layout) and graded as
promptfoo grades them; the same graders in AgentV files keep this service's rules.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.evaluators.aggregate import combine
from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.checks.text_metrics import promptfoo_bleu, promptfoo_rouge_1
from app.evaluators.registry import EVALUATORS
from app.evaluators.results import EvaluatorResult
from app.evaluators.verdicts import Thresholds
from tests.evaluators.fakes import ScriptedTarget
from tests.suites.helpers import check


async def promptfoo_graders(*graders: Any, **test: Any) -> tuple[Any, ...]:
    report = await check(
        {"prompts": ["{{ q }}"], "tests": [{"vars": {"q": "Hi"}, "assert": list(graders), **test}]}
    )
    assert report.suite is not None, report.errors
    return tuple(report.suite.cases[0].evaluators)


async def verdicts(answer: str, *graders: Any) -> list[bool | None]:
    report = await check(
        {"prompts": ["{{ q }}"], "tests": [{"vars": {"q": "Hi"}, "assert": list(graders)}]}
    )
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    context = EvaluationContext(
        case=case, question="Hi", candidate_answer=answer, judge=ScriptedTarget(), judge_attempts=1
    )
    return [(await EVALUATORS.run(config, context)).result.passed for config in case.evaluators]


@pytest.mark.parametrize(
    ("answer", "grader", "passed"),
    [
        ("42\n", {"type": "equals", "value": "42"}, False),
        ("42", {"type": "equals", "value": 42}, True),
        ('{"a": 1, "b": [1, 2]}', {"type": "equals", "value": {"b": [1, 2], "a": 1}}, True),
        ('{"a": 1}', {"type": "equals", "value": {"a": True}}, False),
        ("  hello", {"type": "starts-with", "value": "hello"}, False),
        ("Die Straße", {"type": "icontains", "value": "STRASSE"}, False),
        ("Die Straße", {"type": "icontains", "value": "STRAßE"}, True),
        ("red and blue", {"type": "contains-all", "value": "red, blue"}, True),
        ("red and blue", {"type": "contains-any", "value": "green,blue"}, True),
        ("total 52.5", {"type": "contains", "value": 52.5}, True),
        ("[1, 2, 3]", {"type": "is-json"}, True),
        ("[1, 2, 3]", {"type": "contains-json"}, False),
        ("NaN", {"type": "is-json"}, False),
        ("It is {'a': 1} here", {"type": "contains-json"}, True),
        ('{"a": 1,}', {"type": "contains-json"}, True),
        ("all done\n", {"type": "regex", "value": "done$"}, False),
        ("first\nsecond", {"type": "regex", "value": "^second"}, False),
        ("٣", {"type": "regex", "value": "\\d"}, False),
        ("abc-abc", {"type": "regex", "value": "(?<w>[a-z]+)-\\k<w>"}, True),
        ("kitten\n", {"type": "levenshtein", "value": "kitten", "threshold": 0}, False),
        ("kitten", {"type": "not-levenshtein", "value": "sitting", "threshold": 2}, True),
        ("a dog ran", {"type": "not-rouge-n", "value": "the cat sat"}, True),
        ("alpha", {"type": "contains", "value": "omega", "weight": 0}, True),
    ],
)
async def test_each_check_grades_as_promptfoo_does(answer: str, grader: Any, passed: bool) -> None:
    assert await verdicts(answer, grader) == [passed]


async def test_agentv_files_keep_trimming_and_unicode_folding() -> None:
    report = await check(
        {
            "tests": [
                {
                    "id": "a",
                    "criteria": "x",
                    "input": "Hi",
                    "assertions": [
                        {"type": "equals", "value": "42"},
                        {"type": "icontains", "value": "STRASSE"},
                    ],
                }
            ]
        }
    )
    assert report.suite is not None
    [case] = report.suite.cases
    context = EvaluationContext(
        case=case, question="Hi", candidate_answer="Straße 42\n", judge=ScriptedTarget(),
        judge_attempts=1,
    )  # fmt: skip
    equals, icontains = [await EVALUATORS.run(c, context) for c in case.evaluators]
    assert icontains.result.passed is True
    assert equals.result.passed is False


def _outcome(passed: bool, weight: float = 1.0) -> EvaluatorOutcome:
    score = 1.0 if passed else 0.0
    verdict = "pass" if passed else "fail"
    return EvaluatorOutcome(
        EvaluatorResult(
            name="x", type="contains", score=score, verdict=verdict, passed=passed, weight=weight
        )
    )


def test_without_a_threshold_every_assert_must_pass() -> None:
    four_of_five = [_outcome(True)] * 4 + [_outcome(False)]
    assert combine(four_of_five, Thresholds()).verdict == "pass"  # AgentV's weighted mean
    assert combine(four_of_five, Thresholds(rule="all_pass")).verdict == "fail"
    weightless = [_outcome(True), _outcome(False, weight=0)]
    assert combine(weightless, Thresholds(rule="all_pass")).verdict == "pass"


def test_with_a_threshold_the_mean_decides_alone() -> None:
    outcomes = [_outcome(True)] * 4 + [_outcome(False)]
    mean = Thresholds.model_validate({"pass": 0.7, "borderline": 0, "rule": "mean"})
    assert combine(outcomes, mean).verdict == "pass"
    strict = Thresholds.model_validate({"pass": 0.9, "borderline": 0, "rule": "mean"})
    assert combine(outcomes, strict).verdict == "fail"


async def test_test_thresholds_and_metric_names_are_read_as_promptfoo_does() -> None:
    graders = await promptfoo_graders(
        {"type": "contains", "value": "a", "metric": "accuracy"},
        {"type": "contains", "value": "b", "metric": "accuracy"},
    )
    assert [g.name for g in graders] == ["accuracy", "accuracy-2"]
    assert all(g.semantics == "promptfoo" for g in graders)
    report = await check({"prompts": ["{{ q }}"], "tests": [{"vars": {"q": "x"}, "threshold": 0.7,
                                                              "assert": ["y"]}]})  # fmt: skip
    assert report.suite is not None
    assert report.suite.cases[0].thresholds == Thresholds.model_validate(
        {"pass": 0.7, "borderline": 0, "rule": "mean"}
    )


def test_bleu_and_rouge_are_promptfoo_s() -> None:
    assert promptfoo_bleu("the cat sat on the mat", ["the cat sat on the mat"]) == 1.0
    assert promptfoo_bleu("the cat sat on the mat", ["the cat is on the mat"]) < 0.3
    assert promptfoo_bleu("", ["x"]) == 0.0
    assert round(promptfoo_rouge_1("the fox jumps", "the fox jumped"), 4) == 0.6667


async def test_yaml_is_read_with_yaml_1_2_core_in_promptfoo_files() -> None:
    report = await check(
        "prompts: ['{{ t }} {{ b }} {{ o }} {{ d }}']\n"
        "tests:\n  - vars: {t: 12:30, b: yes, o: 017, d: 1.0}\n    assert: [{type: is-json}]\n"
    )
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    assert case.input_messages[-1].content == "12:30 yes 17 1"


@pytest.mark.parametrize(
    ("code", "passed"),
    [
        ("output.length > 3", True),
        ("output.includes(context.vars.q)", False),
        ("context.prompt === 'Hi'", True),
        ("0.4", True),
        ("0", False),
        ("const n = output.length; n === 5", True),
        ("const words = output.split(' ');\nreturn words.length === 1;", True),
        ("return {pass: false, score: 0.9, reason: 'no'};\n", False),
        ("nothing.here", False),
        ("typeof require === 'undefined' && typeof process === 'undefined'", True),
    ],
)
async def test_javascript_asserts_follow_promptfoo_s_contract(code: str, passed: bool) -> None:
    assert await verdicts("Hello", {"type": "javascript", "value": code}) == [passed]


async def test_a_javascript_assert_is_stopped_at_its_time_and_memory_limits() -> None:
    forever, hungry = await verdicts(
        "x",
        {"type": "javascript", "value": "while (true) {}\nreturn true;"},
        {"type": "javascript", "value": "const a = [];\nwhile (true) a.push('x'.repeat(1e6));"},
    )
    assert (forever, hungry) == (False, False)


async def test_a_javascript_or_typescript_file_is_a_program() -> None:
    def suite(value: str) -> dict[str, object]:
        grader = {"type": "javascript", "value": value}
        return {"prompts": ["{{ q }}"], "tests": [{"vars": {"q": "x"}, "assert": [grader]}]}

    for value in ("file://check.js:grade", "file://check.ts"):
        report = await check(suite(value), code_graders=True)
        assert "never in a suite sent in the request body" in report.errors[0].message


async def test_a_reply_of_tool_calls_is_the_calls_in_javascript_asserts() -> None:
    from app.evaluators.base import CandidateRun
    from app.providers.base import ToolCall
    from app.providers.messages.tool_calls import answer_text

    call = ToolCall(tool="get_weather", input={"city": "Oslo"}, arguments='{"city": "Oslo"}')
    answer = answer_text("", [call])
    code = (
        "output[0].function.name === 'get_weather'"
        " && JSON.parse(output[0].function.arguments).city === 'Oslo'"
    )
    report = await check(
        {
            "prompts": ["{{ q }}"],
            "tests": [{"vars": {"q": "Hi"}, "assert": [{"type": "javascript", "value": code}]}],
        }
    )
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    [config] = case.evaluators
    runs = [CandidateRun(tool_calls=(call,)), CandidateRun()]
    passed = []
    for candidate in runs:  # without calls reported, the answer stays its text
        context = EvaluationContext(
            case=case, question="Hi", candidate_answer=answer, judge=ScriptedTarget(),
            judge_attempts=1, candidate=candidate,
        )  # fmt: skip
        passed.append((await EVALUATORS.run(config, context)).result.passed)
    assert passed == [True, False]
