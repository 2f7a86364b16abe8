"""Views of result records shared by the reports: arms, first misses, pass rates.

An *arm* is one column of what a run compares: the candidate target of a run on one target;
a run on several targets (or prompts) names each record's arm in ``arm``, and every report
groups by it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Record = dict[str, Any]
STATUSES = ("passed", "borderline", "failed", "judge_error", "error")
ERROR_STATUSES = ("error", "judge_error")
"""Cases that could not be graded: errors, not failures, in the reports."""


def arm_of(record: Record) -> str:
    """The arm of a record as people read it: ``target`` or ``target / prompt``.

    A run on several targets names each record's arm (``{index, target, prompt}``); a run on
    one target has none, and its arm is the record's target.
    """
    arm = record.get("arm")
    if isinstance(arm, Mapping):
        target = str(arm.get("target") or record.get("target") or "default")
        prompt = arm.get("prompt")
        return target if prompt is None else f"{target} / {prompt}"
    return str(arm or record.get("target") or "default")


def by_arm(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Records grouped by arm, arms and records in first-seen order."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(arm_of(record), []).append(record)
    return groups


def status_counts(records: Sequence[Record]) -> dict[str, int]:
    """Cases per status (every status present, zeros included)."""
    counts = dict.fromkeys(STATUSES, 0)
    for record in records:
        status = str(record.get("status"))
        counts[status] = counts.get(status, 0) + 1
    return counts


def pass_rate(records: Sequence[Record]) -> float | None:
    """Share of records whose status is ``passed`` (None without records)."""
    if not records:
        return None
    passed = sum(1 for record in records if record.get("status") == "passed")
    return passed / len(records)


def mean_score(records: Sequence[Record]) -> float | None:
    """Mean score over the records that have one."""
    scores = [float(r["score"]) for r in records if isinstance(r.get("score"), int | float)]
    return sum(scores) / len(scores) if scores else None


def first_miss(record: Record) -> str:
    """What went wrong first: the error, else the first miss."""
    if record.get("error"):
        return str(record["error"])
    misses = record.get("misses") or []
    return str(misses[0]) if misses else ""


def percent(value: float | None) -> str:
    """``85.0%``, or a dash."""
    return "–" if value is None else f"{value * 100:.1f}%"


def number(value: float | None, digits: int = 3) -> str:
    """A fixed-point number, or a dash."""
    return "–" if value is None else f"{value:.{digits}f}"
