"""What a run stores to execute (and resume) without the request that created it.

The suite (without its cases), every loaded file text and the resolved plan are one JSON
document on the run row; each case, with the prompt formatted for it when the run was
submitted, is a row of its own, so a resumed run of any size reads its cases in batches
and never formats a case again.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from app.evaluation.arms import RunArm
from app.evaluation.context import CaseContext, ResponseCache, TargetLookup
from app.evaluation.openai_graders.runner import OPENAI_GRADERS
from app.evaluation.plan import RunPlan, format_options, mode_of, with_arms
from app.evaluation.prepared import PreparedRun
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.config import EvaluatorConfig
from app.evaluators.registry import EVALUATORS
from app.formatting import format_prompt
from app.providers.base import ModelOptions
from app.suites.model import EvalCase, EvalSuite, FormattedCase


class PlanSpec(BaseModel):
    """The stored part of a ``RunPlan`` (dataset and thresholds come from the suite)."""

    target: str
    judge_target: str
    max_concurrency: int = Field(ge=1)
    use_cache: bool = False
    guideline_patterns: tuple[str, ...] = ()
    judge_attempts: int = Field(ge=1)
    case_timeout_seconds: float | None = None
    candidate_options: ModelOptions | None = None
    target_options: ModelOptions | None = None
    """The suite's settings of the target (a promptfoo provider's config); unset for none."""
    arms: tuple[ArmSpec, ...] | None = None
    compares_arms: bool | None = None
    """True when a grader compares the arms' answers (select-best); unset otherwise."""


class ArmSpec(BaseModel):
    """One arm of a stored run on several targets (each case row names its arm's index)."""

    target: str
    judge_target: str
    max_concurrency: int = Field(ge=1)
    prompt: str | None = None
    target_options: ModelOptions | None = None


class RunSpec(BaseModel):
    """A run's stored specification.

    Attributes:
        suite: The suite's fields except ``cases``.
        files: Text of every referenced file, keyed by the path as cases write it.
        plan: The resolved plan.
        evaluators: For a regrade with new evaluators: the evaluators every case gets.
        graders: ``openai``: the cases carry OpenAI Evals testing criteria (``/v1`` runs).
    """

    suite: dict[str, Any]
    files: dict[str, str] = Field(default_factory=dict)
    plan: PlanSpec
    evaluators: tuple[EvaluatorConfig, ...] | None = None
    graders: Literal["suite", "openai"] = "suite"


def build_run_spec(run: PreparedRun) -> RunSpec:
    """The spec of a prepared run (its cases are stored on rows of their own)."""
    plan = run.plan
    return RunSpec(
        suite={
            "dataset": plan.dataset,
            "thresholds": plan.thresholds.model_dump(by_alias=True),
            "trials": plan.trials.model_dump(),
            # Only when set, so that stored specs of runs without one stay as they were.
            **({"workspace": plan.workspace.model_dump()} if plan.workspace else {}),
            **({"budget_usd": plan.budget_usd} if plan.budget_usd is not None else {}),
            **(
                {"derived_metrics": plan.derived_metrics.model_dump(mode="json")}
                if plan.derived_metrics
                else {}
            ),
        },
        files=dict(run.files),
        plan=PlanSpec(
            target=plan.target,
            judge_target=plan.judge_target,
            max_concurrency=plan.max_concurrency,
            use_cache=plan.use_cache,
            guideline_patterns=plan.guideline_patterns,
            judge_attempts=plan.judge_attempts,
            case_timeout_seconds=plan.case_timeout_seconds,
            candidate_options=_set_options(plan.candidate_options),
            target_options=_set_options(plan.target_options),
            # Only for a run with arms, so that stored specs of one-target runs stay as they were.
            arms=tuple(
                ArmSpec(
                    target=arm.target,
                    judge_target=arm.judge_target,
                    max_concurrency=arm.max_concurrency,
                    prompt=arm.arm.prompt if arm.arm else None,
                    target_options=_set_options(arm.target_options),
                )
                for arm in plan.arm_plans
            )
            or None,
            compares_arms=plan.compares_arms or None,
        ),
    )


def _set_options(options: ModelOptions) -> ModelOptions | None:
    """``options``, or None for none set (stored specs of runs without stay as they were)."""
    return options if options != ModelOptions() else None


def case_definition(formatted: FormattedCase) -> str:
    """A case and its formatted prompt, as the JSON text stored in the case's row.

    Serialised by pydantic in one step: dumping to a dict and then to text cost about seven
    times as much, and a run's clock runs while its cases are stored.
    """
    return formatted.model_dump_json(by_alias=True)


def stored_case(definition: str, run: PreparedRun) -> FormattedCase:
    """The case a row holds (its JSON), with its prompt.

    Rows written before prompts were stored hold the bare case: it is formatted from the
    run's stored files, as it would have been when the run was submitted.
    """
    try:
        return FormattedCase.model_validate_json(definition)
    except ValidationError:
        bare = json.loads(definition)
        if "prompt" in bare:
            raise
    case = EvalCase.model_validate(bare)
    prompt = format_prompt(case.opening_messages(), run.files, format_options(run.plan))
    return FormattedCase(case=case, prompt=prompt)


def suite_of(spec: RunSpec) -> EvalSuite:
    """The stored suite, with no cases (each case is loaded on its own)."""
    return EvalSuite.model_validate({**spec.suite, "cases": ()})


def prepare_stored_run(
    spec: RunSpec,
    providers: TargetLookup,
    cache: ResponseCache | None,
    programs: ProgramRunner | None = None,
) -> PreparedRun:
    """The ``PreparedRun`` a stored spec describes; its targets must still be configured.

    ``programs`` runs code graders (None when the operator has not enabled them).

    Raises:
        UnknownTarget: The candidate or judge target is no longer configured.
    """
    stored = spec.plan
    suite = suite_of(spec)
    plan = _stored_plan(stored, suite, providers)
    if stored.arms:
        plan = replace(
            with_arms(
                plan,
                [
                    replace(
                        _stored_plan(
                            stored.model_copy(
                                update={k: v for k, v in dict(arm).items() if k != "prompt"}
                            ),
                            suite,
                            providers,
                        ),
                        arm=RunArm(index=index, target=arm.target, prompt=arm.prompt),
                    )
                    for index, arm in enumerate(stored.arms)
                ],
            ),
            compares_arms=bool(stored.compares_arms),
        )
    context = CaseContext(
        providers=providers,
        cache=cache if plan.use_cache else None,
        programs=programs,
        files=spec.files,
    )
    registry = OPENAI_GRADERS if spec.graders == "openai" else EVALUATORS
    return PreparedRun(
        plan=plan,
        context=context,
        files=spec.files,
        evaluators=spec.evaluators,
        registry=registry,
    ).with_arm_plans()


def _stored_plan(stored: PlanSpec, suite: EvalSuite, providers: TargetLookup) -> RunPlan:
    """The plan a stored plan describes (one target: the run's, or one arm's)."""
    candidate = providers.get(stored.target)
    return RunPlan(
        target=candidate.name,
        judge_target=providers.get(stored.judge_target).name,
        max_concurrency=stored.max_concurrency,
        dataset=suite.dataset,
        thresholds=suite.thresholds,
        use_cache=stored.use_cache,
        mode=mode_of(candidate),
        guideline_patterns=stored.guideline_patterns or suite.guideline_patterns,
        judge_attempts=stored.judge_attempts,
        case_timeout_seconds=stored.case_timeout_seconds,
        trials=suite.trials,
        candidate_options=stored.candidate_options or ModelOptions(),
        target_options=stored.target_options or ModelOptions(),
        workspace=suite.workspace,
        budget_usd=suite.budget_usd,
    )
