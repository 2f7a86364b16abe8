"""Rubric grading: the judge decides each ``{id, description, weight, required}`` item.

The judge answers ``{"checks": [{"id", "satisfied", "reasoning"}], "reasoning"}`` with one
check per rubric id (the ids are a JSON-schema enum). Score = satisfied weight / total
weight; an unmet ``required`` item forces ``fail`` whatever the score. A reply that misses a
rubric, names an unknown one or does not parse is asked for again, then ``judge_error``.
"""

from __future__ import annotations

from typing import Any

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig, RubricItem
from app.evaluators.judge_output import RubricChecks, Unscored, parse_rubric_checks
from app.evaluators.llm_judge import (
    JudgeExchange,
    ask_judge,
    judge_temperature,
    render_user_prompt,
    unscored_result,
)
from app.evaluators.results import EvaluatorRawRequest, EvaluatorResult
from app.evaluators.verdicts import verdict_for

RUBRIC_SYSTEM_PROMPT = """\
Decide, for every rubric item listed under [[ ## rubrics ## ]], whether the candidate_answer \
satisfies it. You must respond with a single JSON object matching this schema:

{
  "checks": [{"id": "<rubric id>", "satisfied": <true or false>, "reasoning": "<one sentence>"}],
  "reasoning": "<string, concise overall explanation, 1-2 sentences max>"
}

Give exactly one check for each rubric id, using the ids exactly as listed."""
"""The judge's system prompt for rubric grading (no placeholders)."""


def rubric_schema(rubrics: tuple[RubricItem, ...]) -> dict[str, Any]:
    """JSON Schema of a rubric reply whose check ids are the rubric ids."""
    ids = [item.id for item in rubrics]
    check = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "enum": ids},
            "satisfied": {"type": "boolean"},
            "reasoning": {"type": "string"},
        },
        "required": ["id", "satisfied", "reasoning"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "checks": {"type": "array", "items": check, "minItems": len(ids), "maxItems": len(ids)},
            "reasoning": {"type": "string"},
        },
        "required": ["checks", "reasoning"],
        "additionalProperties": False,
    }


def rubric_section(rubrics: tuple[RubricItem, ...]) -> str:
    """The ``[[ ## rubrics ## ]]`` section listing every item (authored text, not candidate's)."""
    lines = ["[[ ## rubrics ## ]]"]
    for item in rubrics:
        flags = " (required)" if item.required else ""
        lines.append(f"- id: {item.id}{flags}, weight {item.weight:g}: {item.description.strip()}")
    return "\n".join(lines)


def score_checks(rubrics: tuple[RubricItem, ...], reply: RubricChecks) -> tuple[float, bool]:
    """``(satisfied weight / total weight, whether a required item is unmet)``.

    With a total weight of 0 every item counts equally.
    """
    satisfied = {check.id: check.satisfied for check in reply.checks}
    total = sum(item.weight for item in rubrics)
    if total > 0:
        score = sum(item.weight for item in rubrics if satisfied[item.id]) / total
    else:
        score = sum(1 for item in rubrics if satisfied[item.id]) / len(rubrics)
    required_unmet = any(item.required and not satisfied[item.id] for item in rubrics)
    return score, required_unmet


class RubricEvaluator:
    """Asks the judge to check each rubric item and scores the satisfied weight."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Grade the candidate answer against ``config.rubrics``."""
        rubrics = config.rubrics
        if not rubrics:
            raise EvaluatorConfigError(f"evaluator {config.name!r} has no rubrics")
        judge = context.judge_for(config)
        user_prompt = f"{render_user_prompt(config, context).rstrip()}\n\n{rubric_section(rubrics)}"
        raw_request = EvaluatorRawRequest(
            user_prompt=user_prompt, system_prompt=RUBRIC_SYSTEM_PROMPT, target=judge.name
        )
        ids = tuple(item.id for item in rubrics)
        exchange = await ask_judge(
            judge,
            system_prompt=RUBRIC_SYSTEM_PROMPT,
            user_prompt=user_prompt,
            schema=rubric_schema(rubrics),
            parse=lambda text: parse_rubric_checks(text, ids),
            attempts=context.judge_attempts,
            case_id=context.case.id,
            temperature=judge_temperature(config),
        )
        if isinstance(exchange.parsed, Unscored):
            result = unscored_result(config, exchange, exchange.parsed.reason)
            return EvaluatorOutcome(result=result, raw_request=raw_request)
        score, required_unmet = score_checks(rubrics, exchange.parsed)
        result = _rubric_result(config, exchange.parsed, exchange, score, required_unmet, context)
        return EvaluatorOutcome(result=result, raw_request=raw_request, forces_fail=required_unmet)


def _rubric_result(
    config: EvaluatorConfig,
    reply: RubricChecks,
    exchange: JudgeExchange[RubricChecks],
    score: float,
    required_unmet: bool,
    context: EvaluationContext,
) -> EvaluatorResult:
    by_id = {item.id: item for item in config.rubrics}
    hits: list[str] = []
    misses: list[str] = []
    for check in reply.checks:
        line = f"{check.id}: {by_id[check.id].description.strip()}"
        (hits if check.satisfied else misses).append(line)
    return EvaluatorResult(
        name=config.name,
        type=config.type,
        score=score,
        verdict="fail" if required_unmet else verdict_for(score, context.thresholds),
        hits=hits,
        misses=misses,
        reasoning=reply.reasoning or None,
        weight=config.weight,
        raw_output=exchange.outputs[-1],
        details={
            "checks": [check.model_dump() for check in reply.checks],
            "required_unmet": required_unmet,
            **exchange.details(),
        },
    )
