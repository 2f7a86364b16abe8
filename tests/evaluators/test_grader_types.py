"""Every grader type the eval files declare runs, read from a suite in the spelling files use.

Each row is a grader as an eval file writes it (aliases, ``not-`` prefixes, ``negate``,
``weight``, ``threshold``, ``metric``), an answer (and the candidate call's figures) that
passes it, and one that fails it. The grader goes through the suite reader, then the
registry, exactly as a run does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from app.evaluators.base import CandidateRun, EvaluationContext
from app.evaluators.code.js_engine import REGEX_TIMEOUT_MS
from app.evaluators.registry import EVALUATORS
from app.evaluators.results import EvaluatorResult
from app.providers.base import ToolCall
from tests.evaluators.fakes import ScriptedTarget, verdict_json
from tests.evaluators.test_scoring import checks
from tests.suites.helpers import check


@dataclass(frozen=True)
class Answer:
    """A candidate's answer and what its call reported."""

    text: str = ""
    run: CandidateRun = field(default_factory=CandidateRun)
    judge_says: float | str = 0.9
    """The judge's score, or its whole reply."""


def calls(*tools: str, **inputs: Any) -> CandidateRun:
    return CandidateRun(tool_calls=tuple(ToolCall(tool=t, input=inputs.get(t)) for t in tools))


async def grade(
    grader: dict[str, Any], answer: Answer, expected: Any = None
) -> tuple[EvaluatorResult, ScriptedTarget]:
    case: dict[str, Any] = {"id": "a", "criteria": "Answers well", "input": "Hi"}
    if expected is not None:
        case["expected_output"] = expected
    report = await check({"tests": [{**case, "assertions": [grader]}]})
    assert report.suite is not None, report.errors
    [config] = report.suite.cases[0].evaluators
    says = answer.judge_says
    judge = ScriptedTarget(judge_replies=[says if isinstance(says, str) else verdict_json(says)])
    context = EvaluationContext(
        case=report.suite.cases[0],
        question="Hi",
        candidate_answer=answer.text,
        judge=judge,
        judge_attempts=2,
        candidate=answer.run,
    )
    outcome = await EVALUATORS.run(config, context)
    return outcome.result, judge


MATH = {"total": 10, "date": "2026-01-02"}
ROWS: list[tuple[str, dict[str, Any], Answer, Answer, Any]] = [
    ("contains", {"type": "contains", "value": "Paris"}, Answer("Paris."), Answer("Rome"), None),
    (
        "not-contains",
        {"type": "not-contains", "value": "sorry"},
        Answer("Sure"),
        Answer("sorry"),
        None,
    ),
    (
        "negate",
        {"type": "contains", "value": "sorry", "negate": True},
        Answer("Sure"),
        Answer("so sorry"),
        None,
    ),
    (
        "contains-all",
        {"type": "contains-all", "value": ["a", "b"]},
        Answer("a b"),
        Answer("a"),
        None,
    ),
    (
        "contains-any",
        {"type": "contains-any", "value": ["a", "b"]},
        Answer("b"),
        Answer("c"),
        None,
    ),
    ("icontains", {"type": "icontains", "value": "PARIS"}, Answer("paris"), Answer("rome"), None),
    (
        "icontains-all",
        {"type": "icontains-all", "value": ["A", "b"]},
        Answer("a B"),
        Answer("a"),
        None,
    ),
    (
        "icontains-any",
        {"type": "icontains-any", "value": ["X", "Refund"]},
        Answer("a refund"),
        Answer("no"),
        None,
    ),
    ("starts-with", {"type": "starts-with", "value": "Yes"}, Answer(" Yes."), Answer("No"), None),
    ("ends-with", {"type": "ends-with", "value": "done."}, Answer("all done. "), Answer("x"), None),
    ("equals", {"type": "equals", "value": "42"}, Answer(" 42\n"), Answer("420"), None),
    ("regex", {"type": "regex", "value": "^\\d+$"}, Answer("42"), Answer("4x"), None),
    (
        "regex-flags",
        {"type": "regex", "value": "^hello", "flags": "i"},
        Answer("HELLO"),
        Answer("oh hello"),
        None,
    ),
    ("not-regex", {"type": "not-regex", "value": "error"}, Answer("ok"), Answer("an error"), None),
    (
        "is-json-schema",
        {
            "type": "is-json",
            "schema": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
        Answer('{"a": 1}'),
        Answer('{"a": "x"}'),
        None,
    ),
    ("is-json", {"type": "is-json"}, Answer("[1, 2]"), Answer("{not json"), None),
    (
        "contains-json",
        {"type": "contains-json", "schema": {"required": ["a"]}},
        Answer('Here: {"a": 1} done'),
        Answer('Here: {"b": 1}'),
        None,
    ),
    (
        "word-count",
        {"type": "word-count", "min": 2, "max": 3},
        Answer("two words"),
        Answer("far too many words here"),
        None,
    ),
    ("typeof", {"type": "typeof", "value": "number"}, Answer("3.5"), Answer('"3"'), None),
    (
        "field-accuracy",
        {
            "type": "field-accuracy",
            "fields": [
                {"path": "total", "match": "numeric_tolerance", "tolerance": 0.5},
                {"path": "date", "match": "date"},
            ],
        },
        Answer('{"total": 10.2, "date": "2026-01-02"}'),
        Answer('{"total": 12, "date": "2026-01-03"}'),
        [{"role": "assistant", "content": MATH}],
    ),
    (
        "latency",
        {"type": "latency", "threshold": 1000},
        Answer("x", CandidateRun(latency_ms=200)),
        Answer("x", CandidateRun(latency_ms=5000)),
        None,
    ),
    (
        "cost",
        {"type": "cost", "threshold": 0.01},
        Answer("x", CandidateRun(cost_usd=0.001)),
        Answer("x", CandidateRun(cost_usd=0.5)),
        None,
    ),
    (
        "execution-metrics",
        {"type": "execution-metrics", "max_tool_calls": 2, "max_tokens": 100},
        Answer(
            "x",
            CandidateRun(input_tokens=40, output_tokens=10, tool_calls=calls("Read").tool_calls),
        ),
        Answer("x", CandidateRun(input_tokens=400, tool_calls=calls("a", "b", "c").tool_calls)),
        None,
    ),
    (
        "bleu",
        {"type": "bleu", "value": "the cat sat on the mat today"},
        Answer("the cat sat on the mat today"),
        Answer("dogs bark loudly at night"),
        None,
    ),
    (
        "gleu",
        {"type": "gleu", "value": "the cat sat on the mat"},
        Answer("the cat sat on the mat"),
        Answer("a dog"),
        None,
    ),
    (
        "rouge",
        {"type": "rouge-n", "n": 1},
        Answer("Canberra is the capital of Australia"),
        Answer("Sydney, probably"),
        "The capital of Australia is Canberra",
    ),
    (
        "levenshtein",
        {"type": "levenshtein", "value": "hello", "threshold": 1},
        Answer("hallo"),
        Answer("world"),
        None,
    ),
    (
        "tool-trajectory",
        {
            "type": "tool-trajectory",
            "mode": "in_order",
            "expected": [{"tool": "Read"}, {"tool": "Edit"}],
        },
        Answer("x", calls("Read", "Grep", "Edit")),
        Answer("x", calls("Edit", "Read")),
        None,
    ),
    (
        "tool-trajectory-any-order",
        {"type": "trajectory", "mode": "any_order", "minimums": {"Read": 2}},
        Answer("x", calls("Read", "Edit", "Read")),
        Answer("x", calls("Read")),
        None,
    ),
    (
        "skill-trigger",
        {"type": "skill-trigger", "skill": "pdf"},
        Answer("x", calls("Skill", Skill={"skill": "pdf"})),
        Answer("x", calls("Read")),
        None,
    ),
    (
        "composite-weighted",
        {
            "type": "composite",
            "assertions": [
                {"name": "a", "type": "contains", "value": "a"},
                {"name": "b", "type": "contains", "value": "b"},
            ],
            "aggregator": {"type": "weighted_average", "weights": {"a": 0.9, "b": 0.1}},
        },
        Answer("a"),
        Answer("b"),
        None,
    ),
    (
        "composite-threshold",
        {
            "type": "assert-set",
            "assert": [
                {"name": "a", "type": "contains", "value": "a"},
                {"name": "b", "type": "contains", "value": "b"},
                {"name": "c", "type": "contains", "value": "c"},
            ],
            "aggregator": {"type": "threshold", "threshold": 0.6},
        },
        Answer("a b"),
        Answer("a"),
        None,
    ),
    (
        "composite-all",
        {
            "type": "composite",
            "assertions": [
                {"name": "a", "type": "contains", "value": "a"},
                {"name": "b", "type": "contains", "value": "b"},
            ],
            "aggregator": "all",
        },
        Answer("a b"),
        Answer("a"),
        None,
    ),
    (
        "composite-any",
        {
            "type": "composite",
            "assertions": [
                {"name": "a", "type": "contains", "value": "a"},
                {"name": "b", "type": "contains", "value": "b"},
            ],
            "aggregator": {"type": "any"},
        },
        Answer("b"),
        Answer("c"),
        None,
    ),
    (
        "llm_judge",
        {"type": "llm_judge"},
        Answer("x", judge_says=0.9),
        Answer("x", judge_says=0.2),
        None,
    ),
    (
        "llm-grader",
        {"type": "llm-grader", "prompt": "Grade {{ output }}"},
        Answer("x"),
        Answer("x", judge_says=0.1),
        None,
    ),
    (
        "llm-rubric",
        {"type": "llm-rubric", "value": "Is polite"},
        Answer("x", judge_says=checks(**{"rubric-1": True})),
        Answer("x", judge_says=checks(**{"rubric-1": False})),
        None,
    ),
    (
        "llm-grader-threshold",
        {"type": "llm-grader", "threshold": 0.5},
        Answer("x", judge_says=0.6),
        Answer("x", judge_says=0.4),
        None,
    ),
    # AgentV runs these (issue 35): a negated judge, a judge's max_steps, JSON.parse's JSON,
    # token-usage's own limit names, skill-used naming its skill in value.
    (
        "llm-grader-negate",
        {"type": "llm-grader", "prompt": "Is it rude?", "negate": True},
        Answer("x", judge_says=0.1),
        Answer("x", judge_says=0.9),
        None,
    ),
    (
        "llm-grader-max-steps",
        {"type": "llm-grader", "max_steps": 3},
        Answer("x", judge_says=0.9),
        Answer("x", judge_says=0.2),
        None,
    ),
    ("is-json-nan", {"type": "is-json"}, Answer('{"a": 1}'), Answer('{"a": NaN}'), None),
    ("is-json-infinity", {"type": "is-json"}, Answer("[1e308]"), Answer("[-Infinity]"), None),
    (
        "token-usage",
        {"type": "token-usage", "max_total": 100, "max_input": 80, "max_output": 20},
        Answer("x", CandidateRun(input_tokens=40, output_tokens=10)),
        Answer("x", CandidateRun(input_tokens=40, output_tokens=30)),
        None,
    ),
    (
        "skill-used-value",
        {"type": "skill-used", "value": "deploy"},
        Answer("x", calls("Skill", Skill={"skill": "deploy"})),
        Answer("x", calls("Read")),
        None,
    ),
]


@pytest.mark.parametrize(
    ("grader", "passing", "failing", "expected"),
    [pytest.param(g, p, f, e, id=name) for name, g, p, f, e in ROWS],
)
async def test_each_grader_type_passes_and_fails(
    grader: dict[str, Any], passing: Answer, failing: Answer, expected: Any
) -> None:
    good, _ = await grade(grader, passing, expected)
    bad, _ = await grade(grader, failing, expected)
    assert (good.status, good.passed) == ("ok", True), good
    assert (bad.status, bad.passed) == ("ok", False), bad
    assert good.score is not None
    assert bad.score is not None
    assert good.score > bad.score
    assert bad.reasoning
    assert (good.weight, good.type) == (1.0, good.type)


async def test_a_regex_that_backtracks_without_end_is_stopped_as_a_grader_error() -> None:
    started = time.perf_counter()
    result, _ = await grade({"type": "regex", "value": "(a|aa)+$"}, Answer("a" * 80 + "b"))
    assert time.perf_counter() - started < REGEX_TIMEOUT_MS / 1000 + 2
    assert result.status == "error"
    assert "took more than 1s" in (result.reasoning or "")
    assert "/(a|aa)+$/" in (result.reasoning or "")


async def test_rubrics_are_judged_with_their_weights_and_required_items() -> None:
    grader = {
        "type": "rubrics",
        "criteria": [
            {"id": "polite", "outcome": "Is polite", "weight": 3},
            {"id": "short", "outcome": "Is short", "weight": 1, "required": True},
        ],
    }
    for satisfied, score, passed in (
        ({"polite": True, "short": True}, 1.0, True),
        ({"polite": True, "short": False}, 0.75, False),
    ):
        case = {"id": "a", "criteria": "x", "input": "Hi", "assertions": [grader]}
        report = await check({"tests": [case]})
        assert report.suite is not None, report.errors
        [config] = report.suite.cases[0].evaluators
        judge = ScriptedTarget(judge_replies=[checks(**satisfied)])
        context = EvaluationContext(
            case=report.suite.cases[0],
            question="Hi",
            candidate_answer="x",
            judge=judge,
            judge_attempts=1,
        )
        outcome = await EVALUATORS.run(config, context)
        assert (outcome.result.score, outcome.result.passed) == (score, passed)
        assert outcome.forces_fail is not passed


async def test_weight_metric_name_and_threshold_reach_the_result() -> None:
    result, _ = await grade(
        {
            "metric": "similar-enough",
            "type": "bleu",
            "value": "a b c d e f",
            "weight": 3,
            "threshold": 0.99,
        },
        Answer("a b c d e g"),
    )
    assert (result.name, result.type, result.weight) == ("similar-enough", "bleu", 3.0)
    assert result.score is not None
    assert 0 < result.score < 0.99
    assert (result.passed, result.verdict) == (False, "fail")
    lenient, _ = await grade(
        {"type": "bleu", "value": "a b c d e f", "threshold": 0.3}, Answer("a b c d e g")
    )
    assert lenient.passed is True


async def test_a_grader_target_sends_the_judge_call_to_that_target() -> None:
    case = {
        "id": "a",
        "criteria": "x",
        "input": "Hi",
        "assertions": [{"type": "llm-grader", "target": "strict-judge"}],
    }
    report = await check({"tests": [case]})
    assert report.suite is not None, report.errors
    [config] = report.suite.cases[0].evaluators
    run_judge = ScriptedTarget(name="judge")
    strict = ScriptedTarget(name="strict-judge", judge_replies=[verdict_json(0.3)])
    context = EvaluationContext(
        case=report.suite.cases[0],
        question="Hi",
        candidate_answer="x",
        judge=run_judge,
        judge_attempts=1,
        resolve_judge=lambda name: {"strict-judge": strict}[name],
    )
    outcome = await EVALUATORS.run(config, context)
    assert outcome.result.passed is False
    assert (len(strict.judge_requests()), len(run_judge.judge_requests())) == (1, 0)


def test_nlp_metrics_come_from_their_libraries() -> None:
    import sacrebleu
    from rapidfuzz.distance import Levenshtein
    from rouge_score import rouge_scorer

    from app.evaluators.checks import text_metrics

    hyp, ref = "the quick brown fox", "the quick brown dog"
    assert text_metrics.bleu(hyp, [ref]) == sacrebleu.sentence_bleu(hyp, [ref]).score / 100
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    assert text_metrics.rouge(hyp, ref, "rouge_l") == scorer.score(ref, hyp)["rougeL"].fmeasure
    assert text_metrics.levenshtein_distance(hyp, ref) == Levenshtein.distance(hyp, ref) == 2
    with pytest.raises(text_metrics.MetricUnavailable, match="WordNet"):
        text_metrics.similarity("meteor", hyp, ref)


async def test_a_judge_prompt_without_placeholders_is_the_criteria_of_the_default_one() -> None:
    _, judge = await grade({"type": "llm-grader", "prompt": "Is it polite?"}, Answer("Thanks!"))
    [request] = judge.judge_requests()
    user = request.chat_prompt[-1].content
    assert "[[ ## expected_outcome ## ]]\nIs it polite?" in user
    assert "Thanks!" in user
    _, judge = await grade({"type": "llm-grader", "prompt": "Grade {{ output }}"}, Answer("Hi"))
    assert judge.judge_requests()[0].chat_prompt[-1].content == "Grade Hi"


async def test_a_field_without_an_expected_value_counts_as_matched_in_the_weights() -> None:
    # AgentV 4.42.4 (measured on its document-extraction example): 12 of 13 weights there.
    grader = {
        "type": "field-accuracy",
        "fields": [
            {"path": "total", "match": "exact", "weight": 2},
            {"path": "note", "match": "exact", "weight": 1, "required": False},
            {"path": "date", "match": "exact", "weight": 1},
        ],
    }
    answer = Answer('{"total": 10, "note": "x", "date": "2026-02-02"}')
    result, _ = await grade(grader, answer, [{"role": "assistant", "content": MATH}])
    assert result.score == pytest.approx(3 / 4)
    assert "note (no expected value)" in result.hits
