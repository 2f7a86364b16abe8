"""The viewer's matrix of a run with arms: rows are cases, columns are arms. Pure.

Each column's header has the arm's pass rate, mean score, cost, candidate latency p50/p90
and tokens; each cell the case's status and score on that arm, its answer on demand and a
link to the case view. Rows where the arms disagree (not all passed, or not all not) can be
picked out; rows are paged here, as on the run page.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.api.ui.views import percentiles
from app.evaluation.arms import RunArm
from app.schemas.viewer import NumberedRecord

ROWS_PER_PAGE = 100


@dataclass
class ArmColumn:
    """One arm's column header: its figures over the records it has."""

    arm: RunArm
    cases: int = 0
    passed: int = 0
    scores: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    cost: float | None = None
    tokens: int = 0

    @property
    def pass_rate(self) -> float | None:
        """Passed records over the arm's records."""
        return self.passed / self.cases if self.cases else None

    @property
    def mean_score(self) -> float | None:
        """Mean of the arm's scores."""
        return statistics.fmean(self.scores) if self.scores else None

    @property
    def latency(self) -> dict[int, float | None]:
        """The arm's candidate latency percentiles (ms)."""
        return percentiles(self.latencies)

    def add(self, record: dict[str, Any]) -> None:
        """Count one record of the arm."""
        self.cases += 1
        self.passed += record.get("status") == "passed"
        if record.get("score") is not None:
            self.scores.append(float(record["score"]))
        latency = (record.get("latency_ms") or {}).get("candidate")
        if latency is not None:
            self.latencies.append(float(latency))
        for spent in (record.get("cost_usd") or {}).values():
            if spent is not None:
                self.cost = (self.cost or 0.0) + float(spent)
        usage = (record.get("usage") or {}).get("candidate") or {}
        self.tokens += int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)


@dataclass(frozen=True)
class Cell:
    """One case on one arm."""

    seq: int
    status: str
    score: float | None
    answer: str | None


@dataclass(frozen=True)
class MatrixRow:
    """One case: its cell per arm (None where the arm has no record yet)."""

    eval_id: str
    cells: list[Cell | None]

    @property
    def disagrees(self) -> bool:
        """Whether some arms passed the case and others did not."""
        passed = {cell.status == "passed" for cell in self.cells if cell is not None}
        return len(passed) > 1


def matrix_view(
    arms: Sequence[RunArm], rows: Sequence[NumberedRecord], *, disagree: bool, page: int
) -> dict[str, Any]:
    """The columns, the page of rows asked for, and the counts the page shows."""
    columns = [ArmColumn(arm) for arm in arms]
    cases: dict[str, list[Cell | None]] = {}
    for numbered in rows:
        record = numbered.record
        index = (record.get("arm") or {}).get("index")
        if index is None or not 0 <= index < len(columns):
            continue
        columns[index].add(record)
        cells = cases.setdefault(str(record["eval_id"]), [None] * len(columns))
        cells[index] = Cell(
            seq=numbered.seq,
            status=str(record.get("status")),
            score=record.get("score"),
            answer=record.get("candidate_answer"),
        )
    matrix = [MatrixRow(eval_id, cells) for eval_id, cells in cases.items()]
    disagreeing = sum(row.disagrees for row in matrix)
    shown = [row for row in matrix if row.disagrees] if disagree else matrix
    pages = max(1, math.ceil(len(shown) / ROWS_PER_PAGE))
    page = min(max(page, 0), pages - 1)
    return {
        "columns": columns,
        "rows": shown[page * ROWS_PER_PAGE : (page + 1) * ROWS_PER_PAGE],
        "cases": len(matrix),
        "matched": len(shown),
        "disagreeing": disagreeing,
        "disagree": disagree,
        "page": page,
        "pages": pages,
        "first_shown": page * ROWS_PER_PAGE + 1,
    }
