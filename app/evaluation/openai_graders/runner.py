"""The registry a run of the OpenAI surface grades with: each config is one testing criterion.

Each case of such a run carries one ``EvaluatorConfig`` per testing criterion, whose extra
keys hold the grader object (``grader``), the data source item (``item``), the item's given
``sample`` (JSONL runs) and the judge target of each model the graders name (``judges``).
A grader's verdict is its own (``passed``): a failing criterion fails the item.
"""

from __future__ import annotations

from typing import Any

from app.evaluation.openai_graders.checks import (
    COSINE_MODEL,
    Graded,
    cosine_similarity,
    similarity_texts,
    string_check,
    text_similarity,
)
from app.evaluation.openai_graders.formula import FormulaError, evaluate_formula, parse_formula
from app.evaluation.openai_graders.model_graders import (
    label_model,
    render_messages,
    score_model,
)
from app.evaluation.openai_graders.models import (
    GRADER,
    Grader,
    LabelModelGrader,
    MultiGrader,
    PythonGrader,
    ScoreModelGrader,
    StringCheckGrader,
)
from app.evaluation.openai_graders.python_grader import python_grader
from app.evaluation.openai_graders.scope import GraderProblem, sample_scope
from app.evaluators.base import EvaluationContext, EvaluatorOutcome, JudgeClient
from app.evaluators.config import EvaluatorConfig
from app.evaluators.registry import EvaluatorRegistry
from app.evaluators.results import EvaluatorResult


def criterion_id(grader: dict[str, Any]) -> str:
    """A testing criterion's id (``<name>-<uuid>``; its name for criteria stored before ids)."""
    return str(grader.get("id") or grader["name"])


def criterion_config(
    grader: dict[str, Any],
    item: dict[str, Any],
    sample: dict[str, Any] | None,
    judges: dict[str, str],
) -> EvaluatorConfig:
    """The evaluator configuration of one testing criterion for one item."""
    return EvaluatorConfig.model_validate(
        {
            "name": criterion_id(grader),
            "type": grader["type"],
            "grader": grader,
            "item": item,
            "sample": sample,
            "judges": judges,
        }
    )


class _Tools:
    """What graders reach beyond the scope: judge targets by model, the program runner."""

    def __init__(self, context: EvaluationContext, judges: dict[str, str]) -> None:
        self.context = context
        self.judges = judges

    def judge(self, model: str) -> JudgeClient:
        target = self.judges.get(model, model)
        context = self.context
        if target == context.judge.name or context.resolve_judge is None:
            return context.judge
        return context.resolve_judge(target)


async def grade(grader: Grader, scope: dict[str, Any], tools: _Tools) -> Graded:
    """One grader's outcome on the item in ``scope``.

    Raises:
        GraderProblem: The grader could not grade (template, model, program, formula).
    """
    context = tools.context
    # Templates render off the loop, under the case's CPU budget.
    if isinstance(grader, StringCheckGrader):
        return await context.cpu.run(grader.name, lambda: string_check(grader, scope))
    if isinstance(grader, LabelModelGrader | ScoreModelGrader):
        chat = await context.cpu.run_in_process(
            grader.name, render_messages, grader.name, grader.input, scope
        )
        judge, case_id = tools.judge(grader.model), context.case.id
        if isinstance(grader, LabelModelGrader):
            return await label_model(grader, chat, judge, case_id, context.judge_attempts)
        return await score_model(grader, chat, judge, case_id, context.judge_attempts)
    if isinstance(grader, PythonGrader):
        return await python_grader(grader, scope, context.programs)
    if isinstance(grader, MultiGrader):
        return await _multi(grader, scope, tools)
    if grader.evaluation_metric == "cosine":
        texts = await context.cpu.run(grader.name, lambda: similarity_texts(grader, scope))
        embedder = tools.judge(COSINE_MODEL)
        return await cosine_similarity(grader, texts, embedder, context.case.id)
    return await context.cpu.run(grader.name, lambda: text_similarity(grader, scope))


async def _multi(grader: MultiGrader, scope: dict[str, Any], tools: _Tools) -> Graded:
    parts = {key: await grade(sub, scope, tools) for key, sub in grader.graders.items()}
    try:
        score = evaluate_formula(
            parse_formula(grader.calculate_output), {k: g.score for k, g in parts.items()}
        )
    except FormulaError as exc:
        raise GraderProblem(f"{grader.name}.calculate_output: {exc}") from None
    threshold = 1.0 if grader.pass_threshold is None else grader.pass_threshold
    reasoning = ", ".join(f"{key}={part.score:g}" for key, part in parts.items())
    return Graded(score=score, passed=score >= threshold, reasoning=reasoning)


class OpenAIGraderRegistry(EvaluatorRegistry):
    """Runs testing criteria (see the module docstring); never raises for a grader's fault."""

    async def run(self, config: EvaluatorConfig, context: EvaluationContext) -> EvaluatorOutcome:
        """Grade the item with the criterion ``config`` holds."""
        extra = config.model_extra or {}
        grader = GRADER.validate_python(extra["grader"])
        scope = {
            "item": extra.get("item") or {},
            "sample": sample_scope(context.candidate_answer, extra.get("sample")),
        }
        try:
            graded = await grade(grader, scope, _Tools(context, dict(extra.get("judges") or {})))
        except GraderProblem as exc:
            status = "judge_error" if exc.judge else "error"
            result = EvaluatorResult(
                name=config.name, type=grader.type, score=None, verdict=None,
                reasoning=str(exc), status=status,
            )  # fmt: skip
            return EvaluatorOutcome(result=result)
        result = EvaluatorResult(
            name=config.name,
            type=grader.type,
            score=graded.score,
            verdict="pass" if graded.passed else "fail",
            passed=graded.passed,
            reasoning=graded.reasoning,
            details={"sample": graded.sample} if graded.sample else None,
        )
        return EvaluatorOutcome(result=result, forces_fail=not graded.passed, own_mark=True)


OPENAI_GRADERS = OpenAIGraderRegistry()
"""The registry of runs created through the OpenAI Evals surface."""
