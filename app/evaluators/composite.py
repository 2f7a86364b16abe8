"""``composite``: child graders combined by an aggregator.

Aggregators (``aggregator.type``; default ``weighted_average``):

- ``weighted_average``: the children's weighted mean (``weights`` by child name became the
  children's ``weight`` when the suite was read);
- ``threshold``: the share of children that passed; the composite passes when it reaches
  ``aggregator.threshold`` (default 0.5);
- ``all`` / ``any``: 1 when every / some child passed, else 0;
- ``code_judge``: a program reads ``{"results": {child: result}}`` on stdin and prints a result
  (as a code grader does);
- ``llm_judge``: the judge grades the children's results: its ``prompt`` with
  ``{{EVALUATOR_RESULTS_JSON}}`` replaced by them (a default prompt when none is given).

A child that could not grade (``error``/``judge_error``) makes the composite report the same.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from app.errors import EvaluatorConfigError
from app.evaluators.aggregate import combine
from app.evaluators.base import EvaluationContext, EvaluatorOutcome, EvaluatorRunner
from app.evaluators.code.code_judge import DISABLED, NOT_FROM_ROOT, read_result
from app.evaluators.code.programs import ProgramError
from app.evaluators.config import AggregatorConfig, EvaluatorConfig
from app.evaluators.judges.judge_output import Unscored, parse_verdict
from app.evaluators.judges.llm_judge import JUDGE_SYSTEM_PROMPT, VERDICT_SCHEMA, ask_judge
from app.evaluators.results import EvaluatorRawRequest, EvaluatorResult
from app.evaluators.verdicts import verdict_for

RESULTS_PLACEHOLDER = "{{EVALUATOR_RESULTS_JSON}}"
DEFAULT_AGGREGATOR_PROMPT = f"""Review the following grader results:
{RESULTS_PLACEHOLDER}

Decide the final score based on all of them."""
DEFAULT_SHARE = 0.5


def _children_json(outcomes: Sequence[EvaluatorOutcome]) -> dict[str, object]:
    return {
        o.result.name: o.result.model_dump(mode="json", exclude={"raw_output", "details"})
        for o in outcomes
    }


class CompositeEvaluator:
    """Runs each child through the registry, then its aggregator."""

    def __init__(self, registry: EvaluatorRunner) -> None:
        self._registry = registry

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Grade with every child (concurrently), then aggregate their results."""
        if not config.evaluators:
            raise EvaluatorConfigError(f"composite {config.name!r} has no child evaluators")
        outcomes = list(
            await asyncio.gather(
                *(self._registry.run(child, context) for child in config.evaluators)
            )
        )
        children: dict[str, object] = {
            "children": [o.result.model_dump(mode="json") for o in outcomes]
        }
        raw_request = next((o.raw_request for o in outcomes if o.raw_request), None)
        combined = combine(outcomes, context.thresholds)
        kind = config.aggregator.type if config.aggregator else "weighted_average"
        if combined.status != "ok" or kind == "weighted_average":
            result = EvaluatorResult(
                name=config.name,
                type=config.type,
                score=combined.score,
                verdict=combined.verdict,
                hits=combined.hits,
                misses=combined.misses,
                reasoning=combined.error if combined.status != "ok" else combined.reasoning,
                weight=config.weight,
                status=combined.status,
                details=dict(children),
            )
            return EvaluatorOutcome(result, raw_request, combined.forces_fail)
        assert config.aggregator is not None
        return await self._aggregate(config, config.aggregator, outcomes, context, children)

    async def _aggregate(
        self,
        config: EvaluatorConfig,
        aggregator: AggregatorConfig,
        outcomes: list[EvaluatorOutcome],
        context: EvaluationContext,
        children: Mapping[str, object],
    ) -> EvaluatorOutcome:
        if aggregator.type in ("threshold", "all", "any"):
            return _by_passes(config, aggregator, outcomes, context, children)
        if aggregator.type == "code_judge":
            return await _by_program(config, aggregator, outcomes, context, children)
        if aggregator.type == "llm_judge":
            return await _by_judge(config, aggregator, outcomes, context, children)
        raise EvaluatorConfigError(
            f"composite {config.name!r}: unknown aggregator {aggregator.type!r}"
        )


def _result(
    config: EvaluatorConfig,
    context: EvaluationContext,
    score: float,
    hits: list[str],
    misses: list[str],
    reasoning: str | None,
    details: dict[str, object],
) -> EvaluatorResult:
    return EvaluatorResult(
        name=config.name,
        type=config.type,
        score=score,
        verdict=verdict_for(score, context.thresholds),
        hits=hits,
        misses=misses,
        reasoning=reasoning,
        weight=config.weight,
        details=details,
    )


def _by_passes(
    config: EvaluatorConfig,
    aggregator: AggregatorConfig,
    outcomes: list[EvaluatorOutcome],
    context: EvaluationContext,
    children: Mapping[str, object],
) -> EvaluatorOutcome:
    passed = [o.result.name for o in outcomes if o.result.passed]
    failed = [o.result.name for o in outcomes if not o.result.passed]
    share = len(passed) / len(outcomes)
    mark: float | None = None
    if aggregator.type == "threshold":
        score = share
        mark = aggregator.threshold if aggregator.threshold is not None else DEFAULT_SHARE
    elif aggregator.type == "all":
        score = 1.0 if not failed else 0.0
    else:
        score = 1.0 if passed else 0.0
    reasoning = f"{len(passed)} of {len(outcomes)} graders passed ({aggregator.type})"
    hits = [f"{name} passed" for name in passed]
    misses = [f"{name} did not pass" for name in failed]
    result = _result(config, context, score, hits, misses, reasoning, dict(children))
    return EvaluatorOutcome(result, pass_mark=mark)


async def _by_program(
    config: EvaluatorConfig,
    aggregator: AggregatorConfig,
    outcomes: list[EvaluatorOutcome],
    context: EvaluationContext,
    children: Mapping[str, object],
) -> EvaluatorOutcome:
    if context.programs is None:
        raise ProgramError(DISABLED)
    folder = (aggregator.model_extra or {}).get("cwd")
    if not isinstance(folder, str):
        raise ProgramError(NOT_FROM_ROOT)
    stdin = json.dumps({"results": _children_json(outcomes)}, ensure_ascii=False).encode()
    ran = await context.programs.run(aggregator.command, stdin, folder=Path(folder))
    found = read_result(ran.stdout)
    details: dict[str, object] = {**children, "command": list(aggregator.command)}
    result = _result(
        config, context, found["score"], found["hits"], found["misses"], found["reasoning"], details
    )
    return EvaluatorOutcome(result)


async def _by_judge(
    config: EvaluatorConfig,
    aggregator: AggregatorConfig,
    outcomes: list[EvaluatorOutcome],
    context: EvaluationContext,
    children: Mapping[str, object],
) -> EvaluatorOutcome:
    judge = context.judge
    results = json.dumps(_children_json(outcomes), indent=2, ensure_ascii=False)
    template = aggregator.prompt or DEFAULT_AGGREGATOR_PROMPT
    user_prompt = template.replace(RESULTS_PLACEHOLDER, results).replace(
        "{{ EVALUATOR_RESULTS_JSON }}", results
    )
    raw_request = EvaluatorRawRequest(
        user_prompt=user_prompt, system_prompt=JUDGE_SYSTEM_PROMPT, target=judge.name
    )
    exchange = await ask_judge(
        judge,
        system_prompt=JUDGE_SYSTEM_PROMPT,
        user_prompt=user_prompt,
        schema=VERDICT_SCHEMA,
        parse=parse_verdict,
        attempts=context.judge_attempts,
        case_id=context.case.id,
    )
    if isinstance(exchange.parsed, Unscored):
        result = EvaluatorResult(
            name=config.name,
            type=config.type,
            score=None,
            verdict=None,
            reasoning=exchange.parsed.reason,
            weight=config.weight,
            status="judge_error",
            raw_output=exchange.outputs[-1] if exchange.outputs else None,
            details={**children, **exchange.details()},
        )
        return EvaluatorOutcome(result, raw_request)
    verdict = exchange.parsed
    details = {**children, **exchange.details()}
    result = _result(
        config,
        context,
        verdict.score,
        list(verdict.hits),
        list(verdict.misses),
        verdict.reasoning or None,
        details,
    )
    result.raw_output = exchange.outputs[-1]
    return EvaluatorOutcome(result, raw_request)
