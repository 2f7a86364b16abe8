"""Rubric grading: the judge decides each checklist item and gives points to each scored one.

Checklist items (``{id, description, weight, required}``) come back in ``checks`` as
``{"id", "satisfied", "reasoning"}``; scored items (``score_ranges``) in ``scores`` as
``{"id", "score", "reasoning"}`` with whole points 0-10 (the ids of each list are a JSON-schema
enum). One call asks for both. Score = the weighted mean of each item's mark: 1 or 0 when
checked, points / 10 when scored. A ``required`` item unmet or an item under its
``min_score`` forces ``fail`` whatever the score. A reply that misses an item, names an
unknown one or does not parse is asked for again, then ``judge_error``.
"""

from __future__ import annotations

from typing import Any

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.config import SCORE_POINTS, EvaluatorConfig, RubricItem
from app.evaluators.judges.judge_output import RubricChecks, Unscored, parse_rubric_checks
from app.evaluators.judges.llm_judge import (
    JudgeExchange,
    ask_judge,
    judge_options,
    judge_user_prompt,
    unscored_result,
)
from app.evaluators.results import EvaluatorRawRequest, EvaluatorResult
from app.evaluators.verdicts import Thresholds, verdict_for

RUBRIC_SYSTEM_PROMPT = """\
Decide, for every rubric item listed under [[ ## rubrics ## ]], whether the candidate_answer \
satisfies it. You must respond with a single JSON object matching this schema:

{
  "checks": [{"id": "<rubric id>", "satisfied": <true or false>, "reasoning": "<one sentence>"}],
  "reasoning": "<string, concise overall explanation, 1-2 sentences max>"
}

Give exactly one check for each rubric id, using the ids exactly as listed."""
"""The judge's system prompt for a rubric of checklist items only (no placeholders)."""

_SCORED_PROMPT = """\
Judge the candidate_answer against every rubric item listed under [[ ## rubrics ## ]].{checked} \
Give each scored item the whole points, from 0 to 10, of the band that best describes the \
answer; be strict, and let the answer's own words decide between two bands. You must respond \
with a single JSON object matching this schema:

{{
{lists}
  "reasoning": "<string, concise overall explanation, 1-2 sentences max>"
}}

Give exactly one entry for each rubric id, using the ids exactly as listed."""
_CHECKED_SENTENCE = " Decide, for each checklist item, whether the answer satisfies it."
_CHECKS_LINE = (
    '  "checks": [{"id": "<checklist item id>", "satisfied": <true or false>, '
    '"reasoning": "<one sentence>"}],'
)
_SCORES_LINE = (
    '  "scores": [{"id": "<scored item id>", "score": <whole points, 0 to 10>, '
    '"reasoning": "<one sentence>"}],'
)
_OPERATOR_GUIDANCE = {
    "correctness": (
        "correctness: the answer must state or clearly support the outcome; leaving it out "
        "or contradicting it does not meet it."
    ),
    "contradiction": (
        "contradiction: met unless the answer claims something incompatible with the "
        "outcome; the answer need not mention it."
    ),
}


def rubric_system_prompt(rubrics: tuple[RubricItem, ...]) -> str:
    """The judge's system prompt: checks only, or points for the scored items (and checks)."""
    checked = [item for item in rubrics if not item.scored]
    if len(checked) == len(rubrics):
        return RUBRIC_SYSTEM_PROMPT
    lines = [_CHECKS_LINE] if checked else []
    return _SCORED_PROMPT.format(
        checked=_CHECKED_SENTENCE if checked else "", lists="\n".join([*lines, _SCORES_LINE])
    )


def rubric_schema(rubrics: tuple[RubricItem, ...]) -> dict[str, Any]:
    """JSON Schema of a rubric reply: ``checks`` and/or ``scores``, their ids the items' ids."""
    checked = [item.id for item in rubrics if not item.scored]
    scored = [item.id for item in rubrics if item.scored]
    properties: dict[str, Any] = {}
    if checked:
        properties["checks"] = _entries(checked, "satisfied", {"type": "boolean"})
    if scored:
        points = {"type": "integer", "minimum": 0, "maximum": SCORE_POINTS}
        properties["scores"] = _entries(scored, "score", points)
    properties["reasoning"] = {"type": "string"}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _entries(ids: list[str], mark: str, mark_schema: dict[str, Any]) -> dict[str, Any]:
    entry = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "enum": ids},
            mark: mark_schema,
            "reasoning": {"type": "string"},
        },
        "required": ["id", mark, "reasoning"],
        "additionalProperties": False,
    }
    return {"type": "array", "items": entry, "minItems": len(ids), "maxItems": len(ids)}


def rubric_section(rubrics: tuple[RubricItem, ...]) -> str:
    """The ``[[ ## rubrics ## ]]`` section listing every item (authored text, not candidate's)."""
    lines = ["[[ ## rubrics ## ]]"]
    for item in rubrics:
        flags = "".join(
            [
                " (required)" if item.required else "",
                f" (min score {item.min_score:g})" if item.min_score is not None else "",
                f" (operator: {item.operator})" if item.operator else "",
                " (scored 0-10)" if item.scored else "",
            ]
        )
        lines.append(f"- id: {item.id}{flags}, weight {item.weight:g}: {item.description.strip()}")
        lines.extend(
            f"    {band.low}-{band.high} points: {band.outcome.strip()}"
            for band in item.score_ranges
        )
    operators = sorted({item.operator for item in rubrics if item.operator})
    if operators:
        lines.append("Operators:")
        lines.extend(f"- {_OPERATOR_GUIDANCE[operator]}" for operator in operators)
    return "\n".join(lines)


def item_marks(rubrics: tuple[RubricItem, ...], reply: RubricChecks) -> dict[str, float]:
    """Each item's mark in [0, 1]: 1 or 0 for a check, points / 10 for a scored item."""
    marks = {check.id: 1.0 if check.satisfied else 0.0 for check in reply.checks}
    marks.update({entry.id: entry.score / SCORE_POINTS for entry in reply.scores})
    return {item.id: marks[item.id] for item in rubrics}


def unmet_gate(item: RubricItem, mark: float) -> bool:
    """Whether an item misses its ``min_score``, or, when ``required``, is not met."""
    if item.min_score is not None:
        return mark < item.min_score
    return item.required and mark < 1.0


def score_checks(rubrics: tuple[RubricItem, ...], reply: RubricChecks) -> tuple[float, bool]:
    """``(weighted mean of the items' marks, whether an item misses its gate)``.

    With a total weight of 0 every item counts equally.
    """
    marks = item_marks(rubrics, reply)
    total = sum(item.weight for item in rubrics)
    if total > 0:
        score = sum(item.weight * marks[item.id] for item in rubrics) / total
    else:
        score = sum(marks.values()) / len(rubrics)
    required_unmet = any(unmet_gate(item, marks[item.id]) for item in rubrics)
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
        asked = await judge_user_prompt(config, context)
        user_prompt = f"{asked.rstrip()}\n\n{rubric_section(rubrics)}"
        system_prompt = rubric_system_prompt(rubrics)
        raw_request = EvaluatorRawRequest(
            user_prompt=user_prompt, system_prompt=system_prompt, target=judge.name
        )
        checked = tuple(item.id for item in rubrics if not item.scored)
        scored = tuple(item.id for item in rubrics if item.scored)
        exchange = await ask_judge(
            judge,
            system_prompt=system_prompt,
            user_prompt=user_prompt,
            schema=rubric_schema(rubrics),
            parse=lambda text: parse_rubric_checks(text, checked, scored),
            attempts=context.judge_attempts,
            case_id=context.case.id,
            options=judge_options(config),
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
    marks = item_marks(config.rubrics, reply)
    points = {entry.id: entry.score for entry in reply.scores}
    hits: list[str] = []
    misses: list[str] = []
    for item in config.rubrics:
        mark = marks[item.id]
        (hits if _met(item, mark, context.thresholds) else misses).append(
            _item_line(item, points.get(item.id), unmet_gate(item, mark))
        )
    details: dict[str, Any] = {"checks": [check.model_dump() for check in reply.checks]}
    if reply.scores:
        details["scores"] = [entry.model_dump() for entry in reply.scores]
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
        details={**details, "required_unmet": required_unmet, **exchange.details()},
    )


def _item_line(item: RubricItem, points: int | None, gate_missed: bool) -> str:
    """A rubric item as a hit or miss: ``id (points/10): description [gate]``.

    The description is left out when it only repeats the id, and a missed gate is named
    (why a case scoring high still fails).
    """
    line = item.id + (f" ({points}/{SCORE_POINTS})" if item.scored and points is not None else "")
    description = item.description.strip()
    if description and description != item.id:
        line += f": {description}"
    if gate_missed:
        line += (
            f" [required: at least {item.min_score * SCORE_POINTS:g}/{SCORE_POINTS}]"
            if item.min_score is not None
            else " [required]"
        )
    return line


def _met(item: RubricItem, mark: float, thresholds: Thresholds) -> bool:
    """A hit: a check satisfied; points that reach ``min_score``, else the pass threshold."""
    if not item.scored:
        return mark >= 1.0
    floor = item.min_score if item.min_score is not None else thresholds.pass_
    return mark >= floor
