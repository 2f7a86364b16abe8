"""A scripted run: a ``PreparedRun`` whose cases are evaluated by a script that records them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from app.evaluation.context import CaseContext, RunnableTarget
from app.evaluation.known_answers import KnownAnswer
from app.evaluation.plan import RunPlan
from app.evaluation.prepared import PreparedRun
from app.evaluation.records import ResultRecord
from app.providers.errors import UnknownTarget
from app.runs.executor import RunPreparer
from app.suites.model import FormattedCase
from tests.runs.builders import make_record


class NoTargets:
    """A scripted run calls no target."""

    def get(self, name: str) -> RunnableTarget:
        raise UnknownTarget(name, ())

    def names(self) -> list[str]:
        return []


@dataclass
class ScriptedRun:
    """Evaluates each case after ``delay`` seconds; ``fail_ids`` raise unexpectedly."""

    delay: float = 0.0
    max_concurrency: int = 4
    dataset: str = "demo"
    target: str = "default"
    fail_ids: frozenset[str] = frozenset()
    started: list[str] = field(default_factory=list)
    answers: dict[str, str | None] = field(default_factory=dict)
    in_flight: int = 0
    peak_in_flight: int = 0

    async def evaluate(self, case_id: str, candidate_answer: str | None) -> ResultRecord:
        self.started.append(case_id)
        self.answers[case_id] = candidate_answer
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            if case_id in self.fail_ids:
                raise RuntimeError("defect")
            return make_record(case_id)
        finally:
            self.in_flight -= 1


@dataclass(frozen=True)
class ScriptedPreparedRun(PreparedRun):
    """The prepared run the executor gets: its cases go to the script."""

    script: ScriptedRun = field(default_factory=ScriptedRun)

    async def evaluate(
        self, formatted: FormattedCase, *, known: KnownAnswer | None = None
    ) -> ResultRecord:
        return await self.script.evaluate(formatted.case.id, known.text if known else None)


def preparer_for(run: ScriptedRun) -> RunPreparer:
    async def prepare(spec: dict[str, Any]) -> PreparedRun:
        if spec.get("broken"):
            raise ValueError("the stored spec cannot be prepared")
        plan = RunPlan(
            target=run.target,
            judge_target=run.target,
            max_concurrency=run.max_concurrency,
            judge_attempts=1,
            dataset=run.dataset,
        )
        return ScriptedPreparedRun(plan=plan, context=CaseContext(NoTargets()), script=run)

    return prepare
