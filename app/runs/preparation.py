"""Binding of the evaluation layer to durable runs: a stored spec becomes a ``PreparedRun``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.evaluation.context import CaseContext, TargetLookup
from app.evaluation.orchestrator import evaluate_case
from app.evaluation.plan import RunPlan
from app.evaluation.records import ResultRecord
from app.runs.cache import StoredResponseCache
from app.runs.executor import PreparedRun, RunPreparer
from app.runs.models import StoredCase
from app.runs.spec import RunSpec, plan_of, suite_of
from app.runs.store import RunStore
from app.suites.model import EvalCase, EvalSuite


@dataclass(frozen=True)
class EvaluationRun:
    """A run's suite, plan and context, shared by its cases."""

    suite: EvalSuite
    plan: RunPlan
    context: CaseContext
    spec: RunSpec

    @property
    def dataset(self) -> str:
        """The suite's dataset name."""
        return self.suite.dataset

    @property
    def target(self) -> str:
        """The candidate target's name."""
        return self.plan.target

    @property
    def max_concurrency(self) -> int:
        """Cases run at once."""
        return self.plan.max_concurrency

    async def evaluate(self, case: StoredCase) -> ResultRecord:
        """Run one stored case (grading the stored answer again when it has one)."""
        eval_case = EvalCase.model_validate(case.definition)
        if self.spec.evaluators is not None:
            eval_case = eval_case.model_copy(update={"evaluators": self.spec.evaluators})
        return await evaluate_case(
            eval_case,
            self.suite,
            self.plan,
            self.context,
            candidate_answer=case.candidate_answer,
        )


def evaluation_preparer(providers: TargetLookup, store: RunStore) -> RunPreparer:
    """A ``RunPreparer`` that runs cases with ``evaluate_case`` over ``providers``."""

    async def prepare(stored: dict[str, Any]) -> PreparedRun:
        spec = RunSpec.model_validate(stored)
        suite = suite_of(spec)
        plan = plan_of(spec, suite)
        providers.get(plan.target)
        providers.get(plan.judge_target)
        cache = StoredResponseCache(store) if plan.use_cache else None
        context = CaseContext(providers=providers, files=spec.files, cache=cache)
        return EvaluationRun(suite=suite, plan=plan, context=context, spec=spec)

    return prepare
