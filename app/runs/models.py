"""Plain values the store hands out and takes in (no database types leak past the store)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from app.evaluation.arms import RunArm

RunStatus = Literal["queued", "running", "completed", "cancelled", "failed"]
RunKind = Literal["evaluate", "regrade"]
FINISHED_STATUSES: frozenset[str] = frozenset({"completed", "cancelled", "failed"})
ACTIVE_STATUSES: frozenset[str] = frozenset({"queued", "running"})
RETRYABLE_CASE_STATUSES: tuple[str, ...] = ("error", "judge_error")


@dataclass(frozen=True)
class RunInfo:
    """A run as stored, without its cases."""

    id: str
    kind: str
    status: str
    parent_run_id: str | None
    owner: str | None
    target: str
    judge_target: str | None
    name: str | None
    total: int
    done: int
    summary: dict[str, Any] | None
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    arms: tuple[RunArm, ...] = ()
    """The run's arms (none for a run on one target)."""

    @property
    def finished(self) -> bool:
        """Whether the run has reached a final status."""
        return self.status in FINISHED_STATUSES


@dataclass(frozen=True)
class NewRun:
    """What creating a run needs besides its cases."""

    id: str
    kind: RunKind
    target: str
    judge_target: str | None
    spec: dict[str, Any]
    parent_run_id: str | None = None
    owner: str | None = None
    name: str | None = None
    arms: tuple[RunArm, ...] = ()
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Review:
    """A person's verdict on one case: it wins over the graders' in summaries and comparisons.

    ``score`` is the person's score, or None to keep the graders' score with the new verdict.
    ``reviewer`` is the key that set it (its id, as runs' owners), None with keys off.
    """

    seq: int
    verdict: str
    score: float | None
    comment: str | None
    reviewer: str | None
    reviewed_at: datetime


@dataclass(frozen=True)
class NewCase:
    """One case to store with a new run."""

    eval_id: str
    definition: str
    """The case and its formatted prompt as JSON (``app.runs.spec.case_definition``)."""
    candidate_answer: str | None = None
    arm: int | None = None
    """The arm the case runs on (None: a run on one target)."""


@dataclass(frozen=True)
class StoredCase:
    """One case as stored: its position, definition and (for regrades) the stored answer."""

    run_id: str
    seq: int
    eval_id: str
    definition: str
    """JSON of the case and its formatted prompt, as stored (parsed by whoever reads it)."""
    candidate_answer: str | None
    candidate_output: str | None = None
    """What a regraded case's earlier record holds besides the answer (``candidate_output``)."""
    pending: bool = True
    """Whether it still has to run (False: its record is stored)."""
    arm: int | None = None
    """The arm the case runs on (None: a run on one target)."""


@dataclass(frozen=True)
class StoredEvent:
    """One stored server-sent event."""

    seq: int
    type: str
    data: str


@dataclass(frozen=True)
class ResultFacts:
    """What a run's summary is built from: its results' outcomes counted, tokens summed."""

    outcomes: list[tuple[str, float | None, str | None, int]]
    """Each distinct (status, score, ``graders`` column) of the run's results, and how many
    results have it: results mostly repeat a few outcomes, so each is read and parsed once."""
    candidate_input_tokens: int = 0
    candidate_output_tokens: int = 0
    judge_input_tokens: int = 0
    judge_output_tokens: int = 0
    candidate_calls: int = 0
    """Requests sent to the candidate (each record's ``attempts``), failed tries included."""
    judge_calls: int = 0
    """Requests sent to the judges, failed tries and re-asks included."""
    arms: list[tuple[RunArm, ResultFacts]] = field(default_factory=list)
    """A run with arms: the facts of each arm's results."""
    reviewed: int = 0
    """Cases a person gave a verdict, counted under it (``reviewed_facts``)."""


@dataclass(frozen=True)
class Page:
    """One page of a listing, with the cursor of the next page (None on the last)."""

    items: list[Any]
    next_cursor: str | None
