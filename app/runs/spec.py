"""What a run stores to execute (and resume) without the request that created it.

The suite (without its cases), every loaded file text and the resolved plan are one JSON
document on the run row; each case's definition is a row of its own, so a resumed run of
any size reads its cases one at a time.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.evaluation.plan import RunPlan
from app.suites.model import EvalCase, EvalSuite, EvaluatorConfig


class PlanSpec(BaseModel):
    """The stored part of a ``RunPlan`` (dataset and thresholds come from the suite)."""

    target: str
    judge_target: str
    max_concurrency: int = Field(ge=1)
    use_cache: bool = False
    guideline_patterns: tuple[str, ...] = ()
    judge_attempts: int = Field(ge=1)
    case_timeout_seconds: float | None = None


class RunSpec(BaseModel):
    """A run's stored specification.

    Attributes:
        suite: The suite's fields except ``cases``.
        files: Text of every referenced file, keyed by the path as cases write it.
        plan: The resolved plan.
        evaluators: For a regrade with new evaluators: the evaluators every case gets.
    """

    suite: dict[str, Any]
    files: dict[str, str] = Field(default_factory=dict)
    plan: PlanSpec
    evaluators: tuple[EvaluatorConfig, ...] | None = None


def build_run_spec(suite: EvalSuite, files: dict[str, str], plan: RunPlan) -> RunSpec:
    """The spec of a run of ``suite`` under ``plan``."""
    return RunSpec(
        suite=suite.model_dump(mode="json", by_alias=True, exclude={"cases"}),
        files=files,
        plan=PlanSpec(
            target=plan.target,
            judge_target=plan.judge_target,
            max_concurrency=plan.max_concurrency,
            use_cache=plan.use_cache,
            guideline_patterns=plan.guideline_patterns,
            judge_attempts=plan.judge_attempts,
            case_timeout_seconds=plan.case_timeout_seconds,
        ),
    )


def case_definition(case: EvalCase) -> dict[str, Any]:
    """A case as stored in its row."""
    return case.model_dump(mode="json", by_alias=True)


def suite_of(spec: RunSpec) -> EvalSuite:
    """The stored suite, with no cases (each case is loaded on its own)."""
    return EvalSuite.model_validate({**spec.suite, "cases": ()})


def plan_of(spec: RunSpec, suite: EvalSuite) -> RunPlan:
    """The ``RunPlan`` a stored spec describes."""
    stored = spec.plan
    return RunPlan(
        target=stored.target,
        judge_target=stored.judge_target,
        max_concurrency=stored.max_concurrency,
        dataset=suite.dataset,
        thresholds=suite.thresholds,
        use_cache=stored.use_cache,
        guideline_patterns=stored.guideline_patterns or suite.guideline_patterns,
        judge_attempts=stored.judge_attempts,
        case_timeout_seconds=stored.case_timeout_seconds,
    )
