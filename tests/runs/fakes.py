"""A scripted ``PreparedRun`` that records which cases it evaluated."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from app.evaluation.records import ResultRecord
from app.runs.executor import PreparedRun, RunPreparer
from app.runs.models import StoredCase
from tests.runs.builders import make_record


@dataclass
class ScriptedRun:
    """Evaluates each case after ``delay`` seconds; ``fail_ids`` raise unexpectedly."""

    delay: float = 0.0
    max_concurrency: int = 4
    dataset: str = "demo"
    target: str = "default"
    fail_ids: frozenset[str] = frozenset()
    started: list[str] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0

    async def evaluate(self, case: StoredCase) -> ResultRecord:
        self.started.append(case.eval_id)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            if case.eval_id in self.fail_ids:
                raise RuntimeError("defect")
            return make_record(case.eval_id)
        finally:
            self.in_flight -= 1


def preparer_for(run: ScriptedRun) -> RunPreparer:
    async def prepare(spec: dict[str, Any]) -> PreparedRun:
        if spec.get("broken"):
            raise ValueError("the stored spec cannot be prepared")
        return run

    return prepare
