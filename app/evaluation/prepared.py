"""``PreparedRun``: a run ready to execute, shared by ``/evaluate`` and durable runs."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from app.evaluation.budget import Spending
from app.evaluation.context import CaseContext
from app.evaluation.known_answers import KnownAnswer
from app.evaluation.orchestrator import OnResult, evaluate_case, not_run, run_cases
from app.evaluation.plan import RunPlan
from app.evaluation.records import ResultRecord
from app.evaluation.sequential import Sequence
from app.evaluation.workspaces import run_after_all
from app.evaluators.config import EvaluatorConfig
from app.evaluators.registry import EVALUATORS, EvaluatorRegistry
from app.suites.model import FormattedCase


@dataclass(frozen=True)
class PreparedRun:
    """A run's plan and the context its cases share, and (inline runs) its formatted cases.

    Attributes:
        plan: How the cases run (targets, concurrency, thresholds, formatting mode...).
        context: Targets and the response cache.
        files: Text of every file the suite references, keyed by the path as cases write it.
        cases: The cases of an inline run; a durable run reads its cases from the store.
        warnings: What loading the suite found worth a look.
        evaluators: For a regrade with new evaluators: the evaluators every case gets.
        registry: The evaluators by type (the OpenAI Evals surface grades with its own).
        arm_runs: A run on several targets: one run per arm (its plan, its cases formatted
            for its target), in arm order; empty for a run on one target.
    """

    plan: RunPlan
    context: CaseContext
    files: Mapping[str, str] = field(default_factory=dict)
    cases: tuple[FormattedCase, ...] = ()
    warnings: tuple[str, ...] = ()
    evaluators: tuple[EvaluatorConfig, ...] | None = None
    registry: EvaluatorRegistry = EVALUATORS
    arm_runs: tuple[PreparedRun, ...] = ()

    def for_arm(self, index: int | None) -> PreparedRun:
        """The run of arm ``index`` (this run for ``None`` or a run without arms)."""
        if index is None or not self.arm_runs:
            return self
        return self.arm_runs[index]

    def with_arm_plans(
        self, cases: Mapping[int, tuple[FormattedCase, ...]] | None = None
    ) -> PreparedRun:
        """This run with one run per arm of its plan (``cases``: each arm's, by arm index)."""
        if not self.plan.arm_plans:
            return self
        arm_runs = tuple(
            replace(self, plan=plan, cases=(cases or {}).get(index, ()), arm_runs=())
            for index, plan in enumerate(self.plan.arm_plans)
        )
        return replace(self, arm_runs=arm_runs)

    async def evaluate(
        self, formatted: FormattedCase, *, known: KnownAnswer | None = None
    ) -> ResultRecord:
        """Run one case (grading what it produced before, ``known``, when given).

        Never raises for a failure of the case.
        """
        if self.evaluators is not None:
            case = formatted.case.model_copy(update={"evaluators": self.evaluators})
            formatted = formatted.model_copy(update={"case": case})
        return await evaluate_case(
            formatted,
            self.plan,
            self.context,
            known=known,
            registry=self.registry,
        )

    async def run(self, on_result: OnResult) -> None:
        """Run every case of ``cases``; each record goes to ``on_result`` as it finishes.

        A run with arms runs every arm at once (each within its own target's limits). The
        suite's ``afterAll`` extensions run once every case has finished.
        """
        records: list[ResultRecord] = []

        async def keep(record: ResultRecord) -> None:
            records.append(record)
            await on_result(record)

        if any(case.case.sequence is not None for case in self.cases):
            await self._run_in_order(keep)
        elif self.arm_runs:
            async with asyncio.TaskGroup() as group:
                for arm_run in self.arm_runs:
                    group.create_task(arm_run.run_cases(keep))
        else:
            await self.run_cases(keep)
        await run_after_all(self.plan.workspace, self.context.programs, records)

    async def _run_in_order(self, on_result: OnResult) -> None:
        """Cases that read earlier ones: one at a time, test by test, arm by arm (promptfoo's)."""
        sequence = Sequence()
        arms = self.arm_runs or (self,)
        by_arm = [{case.case.id: case for case in arm.cases} for arm in arms]
        spending = {index: Spending(arm.plan.budget_usd) for index, arm in enumerate(arms)
                    if arm.plan.budget_usd is not None}  # fmt: skip
        for test in self.cases:
            for index, arm in enumerate(arms):
                formatted = by_arm[index].get(test.case.id)
                if formatted is None:  # a test may skip a prompt
                    continue
                ready = sequence.ready(formatted, arm.plan, self.files)
                budget = spending.get(index)
                if budget is not None and budget.exhausted():
                    record = not_run(ready.case, arm.plan, budget.refusal())
                else:
                    record = await arm.evaluate(ready)
                    if budget is not None:
                        budget.add(record)
                await sequence.note(ready, arm.plan, record)
                await on_result(record)

    async def run_cases(self, on_result: OnResult) -> None:
        """Run every case of ``cases`` (no run-level hook: an arm's part of a run)."""
        await run_cases(self.cases, self.plan, self.context, on_result)
