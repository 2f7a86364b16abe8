"""What the candidate produced in an earlier run, graded again without calling it (regrades)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from app.evaluation.records import TokenUsage


@dataclass(frozen=True)
class KnownAnswer:
    """A stored answer and what else the candidate produced with it.

    Attributes:
        text: The answer (a live conversation's last).
        turns: A live conversation's answers, turn by turn (None: the turn was not answered).
        file_changes: What the candidate changed in its workspace (None: no workspace).
        usage: Tokens the answer cost, copied into the record.
        latency_ms: Time the answer took, copied into the record.
    """

    text: str
    turns: tuple[str | None, ...] = ()
    file_changes: str | None = None
    usage: TokenUsage | None = None
    latency_ms: float | None = None


def known_answer(text: str, output: str | None) -> KnownAnswer:
    """The answer, with ``output``: JSON ``{turns, file_changes}`` of the earlier record."""
    stored: dict[str, Any] = orjson.loads(output) if output else {}
    turns = stored.get("turns") or []
    changes = stored.get("file_changes")
    return KnownAnswer(
        text=text,
        turns=tuple(_turn_answer(turn) for turn in turns),
        file_changes=changes if isinstance(changes, str) else None,
    )


def _turn_answer(turn: Any) -> str | None:
    answer = turn.get("candidate_answer") if isinstance(turn, dict) else None
    return answer if isinstance(answer, str) else None
