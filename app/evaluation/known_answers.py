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


def candidate_output(record: str) -> str | None:
    """What a stored record (its JSON) holds besides the answer, for a regrade to grade again.

    JSON ``{turns: [answer or null, ...], file_changes}``; None when the record has neither.
    """
    stored = orjson.loads(record)
    turns, changes = stored.get("turns"), stored.get("file_changes")
    if turns is None and changes is None:
        return None
    answers = [turn.get("candidate_answer") for turn in turns or ()]
    return orjson.dumps({"turns": answers, "file_changes": changes}).decode()


def known_answer(text: str, output: str | None) -> KnownAnswer:
    """The answer, with ``output``: what ``candidate_output`` kept of the earlier record."""
    stored: dict[str, Any] = orjson.loads(output) if output else {}
    return KnownAnswer(
        text=text,
        turns=tuple(stored.get("turns") or ()),
        file_changes=stored.get("file_changes"),
    )
