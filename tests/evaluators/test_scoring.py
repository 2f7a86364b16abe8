"""Rubric, deterministic and composite scoring; verdict thresholds."""

from __future__ import annotations

import json

import pytest

from app.evaluators.base import EvaluationContext
from app.evaluators.config import EvaluatorConfig, RubricItem
from app.evaluators.judges.rubrics import rubric_schema
from app.evaluators.registry import EVALUATORS
from app.evaluators.verdicts import Thresholds, verdict_for
from tests.evaluators.fakes import ScriptedTarget, make_case, verdict_json

RUBRICS = (
    RubricItem(id="correct", description="States that 2+2 is 4", weight=3, required=True),
    RubricItem(id="units", description="Mentions no units", weight=1),
)


def context_for(answer: str, judge: ScriptedTarget | None = None, **kwargs: object):
    return EvaluationContext(
        judge_attempts=3,
        case=make_case(),
        question="What is 2+2?",
        candidate_answer=answer,
        judge=judge or ScriptedTarget(),
        **kwargs,  # type: ignore[arg-type]
    )


def checks(**satisfied: bool) -> str:
    return json.dumps(
        {
            "checks": [
                {"id": key, "satisfied": value, "reasoning": "r"}
                for key, value in satisfied.items()
            ],
            "reasoning": "overall",
        }
    )


@pytest.mark.parametrize(
    ("score", "verdict"),
    [(1.0, "pass"), (0.8, "pass"), (0.79, "borderline"), (0.6, "borderline"), (0.59, "fail")],
)
def test_default_thresholds(score: float, verdict: str) -> None:
    assert verdict_for(score) == verdict


def test_suite_thresholds_move_the_verdict() -> None:
    strict = Thresholds.model_validate({"pass": 0.95, "borderline": 0.9})
    assert verdict_for(0.9, strict) == "borderline"
    assert verdict_for(0.85, strict) == "fail"


async def test_rubric_score_is_satisfied_weight_over_total_weight() -> None:
    judge = ScriptedTarget(judge_replies=[checks(correct=True, units=False)])
    config = EvaluatorConfig(name="rubric", type="llm_judge", rubrics=RUBRICS)
    outcome = await EVALUATORS.run(config, context_for("4", judge))
    assert outcome.result.score == 0.75
    assert outcome.result.verdict == "borderline"
    assert outcome.result.hits == ["correct: States that 2+2 is 4"]
    assert outcome.result.misses == ["units: Mentions no units"]
    request = judge.judge_requests()[0]
    assert request.options.json_schema == rubric_schema(RUBRICS)
    schema_ids = request.options.json_schema["properties"]["checks"]["items"]["properties"]["id"]
    assert schema_ids["enum"] == ["correct", "units"]
    assert "- id: correct (required), weight 3: States that 2+2 is 4" in request.question


async def test_unmet_required_rubric_forces_fail() -> None:
    judge = ScriptedTarget(judge_replies=[checks(correct=False, units=True)])
    rubrics = (
        RubricItem(id="correct", description="d", weight=1, required=True),
        RubricItem(id="units", description="d", weight=9),
    )
    config = EvaluatorConfig(name="rubric", type="llm_judge", rubrics=rubrics)
    outcome = await EVALUATORS.run(config, context_for("5", judge))
    assert outcome.result.score == 0.9
    assert outcome.result.verdict == "fail"
    assert outcome.forces_fail


async def test_rubric_reply_missing_a_check_is_retried_then_judge_error() -> None:
    judge = ScriptedTarget(judge_replies=[checks(correct=True)])
    config = EvaluatorConfig(name="rubric", type="llm_judge", rubrics=RUBRICS)
    outcome = await EVALUATORS.run(config, context_for("4", judge))
    assert len(judge.judge_requests()) == 3
    assert outcome.result.status == "judge_error"
    assert "units" in (outcome.result.reasoning or "")
    assert outcome.result.raw_output == checks(correct=True)


BANDS = {"0": "Wrong.", "4": "Partly right.", "7": "Right, loosely put.", "10": "Exact."}
SCORED = (
    RubricItem(id="accuracy", description="accuracy", weight=2, score_ranges=BANDS, min_score=0.7),
    RubricItem(id="brevity", description="brevity", score_ranges=BANDS, operator="contradiction"),
    RubricItem(id="units", description="Mentions no units", weight=1, required=True),
)


def marks(scores: dict[str, object], **satisfied: bool) -> str:
    reply = json.loads(checks(**satisfied))
    reply["scores"] = [
        {"id": key, "score": points, "reasoning": "r"} for key, points in scores.items()
    ]
    return json.dumps(reply)


async def test_scored_criteria_count_their_points_over_ten_with_the_checks_in_one_call() -> None:
    judge = ScriptedTarget(judge_replies=[marks({"accuracy": 9, "brevity": 4.0}, units=True)])
    config = EvaluatorConfig(name="rubric", type="llm_judge", rubrics=SCORED)
    outcome = await EVALUATORS.run(config, context_for("4", judge))
    assert outcome.result.score == pytest.approx((2 * 0.9 + 0.4 + 1) / 4)
    assert outcome.result.verdict == "pass"
    assert not outcome.forces_fail
    assert outcome.result.hits == ["accuracy (9/10)", "units: Mentions no units"]
    assert outcome.result.misses == ["brevity (4/10)"]
    assert [entry["score"] for entry in (outcome.result.details or {})["scores"]] == [9, 4]


async def test_a_miss_names_the_gate_it_missed_so_a_high_score_that_fails_says_why() -> None:
    judge = ScriptedTarget(judge_replies=[marks({"accuracy": 6, "brevity": 10}, units=False)])
    config = EvaluatorConfig(name="rubric", type="llm_judge", rubrics=SCORED)
    outcome = await EVALUATORS.run(config, context_for("4", judge))
    assert outcome.forces_fail
    assert outcome.result.misses == [
        "accuracy (6/10) [required: at least 7/10]",
        "units: Mentions no units [required]",
    ]
    [request] = judge.judge_requests()
    schema = request.options.json_schema
    assert schema == rubric_schema(SCORED)
    assert schema["required"] == ["checks", "scores", "reasoning"]
    scores = schema["properties"]["scores"]["items"]["properties"]
    assert scores["id"]["enum"] == ["accuracy", "brevity"]
    assert (scores["score"]["minimum"], scores["score"]["maximum"]) == (0, 10)
    checked = schema["properties"]["checks"]["items"]["properties"]["id"]
    assert checked["enum"] == ["units"]
    assert "- id: accuracy (min score 0.7) (scored 0-10), weight 2: accuracy" in request.question
    assert "    4-6 points: Partly right." in request.question
    assert "- id: brevity (operator: contradiction) (scored 0-10), weight 1" in request.question
    assert "contradiction: met unless the answer claims something incompatible" in (
        request.question
    )
    assert '"scores": [{"id": "<scored item id>"' in request.chat_prompt[0].content


async def test_a_scored_criterion_under_its_min_score_fails_the_case_whatever_the_score() -> None:
    judge = ScriptedTarget(judge_replies=[marks({"accuracy": 6, "brevity": 10}, units=True)])
    config = EvaluatorConfig(name="rubric", type="llm_judge", rubrics=SCORED)
    outcome = await EVALUATORS.run(config, context_for("4", judge))
    assert outcome.result.score == pytest.approx((2 * 0.6 + 1 + 1) / 4)
    assert outcome.result.verdict == "fail"
    assert outcome.forces_fail
    assert (outcome.result.details or {})["required_unmet"] is True


@pytest.mark.parametrize(
    "reply",
    [
        marks({"accuracy": 7.5, "brevity": 4}, units=True),
        marks({"accuracy": 11, "brevity": 4}, units=True),
        marks({"accuracy": True, "brevity": 4}, units=True),
        marks({"accuracy": 7}, units=True),
        checks(accuracy=True, brevity=True, units=True),
    ],
    ids=["fraction", "over-ten", "boolean", "missing-score", "checked-not-scored"],
)
async def test_points_that_are_not_whole_numbers_0_to_10_for_every_scored_id_are_asked_again(
    reply: str,
) -> None:
    judge = ScriptedTarget(judge_replies=[reply])
    config = EvaluatorConfig(name="rubric", type="llm_judge", rubrics=SCORED)
    outcome = await EVALUATORS.run(config, context_for("4", judge))
    assert len(judge.judge_requests()) == 3
    assert outcome.result.status == "judge_error"


@pytest.mark.parametrize(
    ("kind", "value", "negate", "answer", "score"),
    [
        ("contains", "4", False, "It is 4.", 1.0),
        ("contains", "5", False, "It is 4.", 0.0),
        ("contains", ["It", "4"], False, "It is 4.", 1.0),
        ("contains", ["It", "5"], False, "It is 4.", 0.0),
        ("contains", "5", True, "It is 4.", 1.0),
        ("regex", r"\b4\b", False, "It is 4.", 1.0),
        ("regex", r"^4$", False, "It is 4.", 0.0),
        ("regex", r"^It", True, "It is 4.", 0.0),
        ("equals", "4", False, "  4\n", 1.0),
        ("equals", "4", False, "4.0", 0.0),
        ("equals", 4, False, "4", 1.0),
        ("equals", "4", True, "5", 1.0),
        ("is_json", None, False, '{"a": 1}', 1.0),
        ("is_json", None, False, "a: 1", 0.0),
        ("is_json", None, True, "a: 1", 1.0),
    ],
)
async def test_deterministic_checks(
    kind: str, value: object, negate: bool, answer: str, score: float
) -> None:
    config = EvaluatorConfig(name=kind, type=kind, value=value, negate=negate)
    outcome = await EVALUATORS.run(config, context_for(answer))
    assert outcome.result.status == "ok"
    assert outcome.result.score == score
    assert outcome.result.verdict == ("pass" if score == 1.0 else "fail")
    assert outcome.result.hits if score else outcome.result.misses


async def test_is_json_validates_against_a_schema() -> None:
    schema = {
        "type": "object",
        "required": ["answer"],
        "properties": {"answer": {"type": "integer"}},
    }
    config = EvaluatorConfig.model_validate({"name": "j", "type": "is_json", "schema": schema})
    good = await EVALUATORS.run(config, context_for('{"answer": 4}'))
    bad = await EVALUATORS.run(config, context_for('{"answer": "four"}'))
    assert good.result.score == 1.0
    assert bad.result.score == 0.0
    assert "answer" in bad.result.misses[0]


@pytest.mark.parametrize(
    "config",
    [
        EvaluatorConfig(name="r", type="regex", value="(unclosed"),
        EvaluatorConfig(name="c", type="contains", value=None),
        EvaluatorConfig.model_validate(
            {"name": "j", "type": "is_json", "schema": {"type": "no-such-type"}}
        ),
        EvaluatorConfig(name="x", type="no_such_evaluator"),
        EvaluatorConfig(name="k", type="composite"),
        EvaluatorConfig(name="judge", type="llm_judge", target="missing"),
    ],
    ids=["bad-regex", "no-value", "bad-schema", "unknown-type", "empty-composite", "bad-target"],
)
async def test_broken_configuration_is_an_error_result_not_an_exception(
    config: EvaluatorConfig,
) -> None:
    def unknown(name: str) -> ScriptedTarget:
        from app.providers.errors import UnknownTarget

        raise UnknownTarget(name, ["fake"])

    outcome = await EVALUATORS.run(config, context_for('{"a": 1}', resolve_judge=unknown))
    assert outcome.result.status == "error"
    assert outcome.result.score is None
    assert outcome.result.reasoning


async def test_composite_is_the_weighted_mean_of_its_children() -> None:
    judge = ScriptedTarget(judge_replies=[verdict_json(0.5)])
    config = EvaluatorConfig(
        name="combo",
        type="composite",
        evaluators=(
            EvaluatorConfig(name="has4", type="contains", value="4", weight=3),
            EvaluatorConfig(name="judge", type="llm_judge", weight=1),
        ),
    )
    outcome = await EVALUATORS.run(config, context_for("4", judge))
    assert outcome.result.score == pytest.approx((3 * 1.0 + 1 * 0.5) / 4)
    assert outcome.result.verdict == "pass"
    assert outcome.result.reasoning == "has4: answer contains '4' | judge: fine"
    assert outcome.result.details is not None
    assert [c["name"] for c in outcome.result.details["children"]] == ["has4", "judge"]
    assert outcome.raw_request is not None


async def test_composite_with_a_judge_error_child_is_judge_error() -> None:
    judge = ScriptedTarget(judge_replies=["garbage"])
    config = EvaluatorConfig(
        name="combo",
        type="composite",
        evaluators=(
            EvaluatorConfig(name="has4", type="contains", value="4"),
            EvaluatorConfig(name="judge", type="llm_judge"),
        ),
    )
    outcome = await EVALUATORS.run(config, context_for("4", judge))
    assert outcome.result.status == "judge_error"
    assert outcome.result.score is None
