"""What one side did with one case: its verdict, its graders, the requests it sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scripts.conformance.agentv.fake import Logged


@dataclass
class GraderRun:
    """One grader's result."""

    name: str
    type: str
    score: float | None
    passed: bool
    note: str | None = None
    """Why it gave no score (an error), when it says."""


@dataclass
class CaseRun:
    """One case as one side ran it (``verdict``: pass, fail or error)."""

    case_id: str
    verdict: str
    score: float | None
    graders: list[GraderRun] = field(default_factory=list)
    requests: list[Logged] = field(default_factory=list)
    error: str | None = None

    def candidate_messages(self) -> list[dict[str, Any]] | None:
        """The chat messages of the last candidate call (a live conversation's last turn)."""
        calls = [entry.messages for entry in self.requests if not entry.judge]
        return calls[-1] if calls else None

    def judge_question(self) -> str | None:
        """The question section of the first judge prompt that has one."""
        for entry in self.requests:
            question = entry.question() if entry.judge else None
            if question is not None:
                return question
        return None


@dataclass
class SuiteRun:
    """One suite as one side ran it: its cases, or why it ran none."""

    cases: dict[str, CaseRun] = field(default_factory=dict)
    refused: str | None = None
