"""Follow a run's event stream to its end, resuming with ``Last-Event-ID`` when it drops."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from app.cli.client import ServiceClient
from app.cli.problems import ClientError
from app.cli.records import ERROR_STATUSES

MAX_SILENT_RECONNECTS = 20
"""Reconnections in a row that bring no event before the command gives up."""


@dataclass
class Tally:
    """What the stream has told so far: cases done, passed, in error; every record."""

    total: int
    done: int = 0
    passed: int = 0
    errors: int = 0
    started: float = field(default_factory=time.monotonic)
    records: list[dict[str, Any]] = field(default_factory=list)
    reconnects: int = 0

    @property
    def pass_rate(self) -> float | None:
        """Passed cases out of those done."""
        return self.passed / len(self.records) if self.records else None

    def eta_seconds(self) -> float | None:
        """Seconds left at the pace so far (None before the first case)."""
        if not self.done or self.done >= self.total:
            return None if not self.done else 0.0
        elapsed = time.monotonic() - self.started
        return elapsed / self.done * (self.total - self.done)

    def add(self, record: dict[str, Any]) -> None:
        """Count a finished case."""
        self.records.append(record)
        self.passed += record.get("status") == "passed"
        self.errors += record.get("status") in ERROR_STATUSES


OnChange = Callable[[Tally], None]
OnDrop = Callable[[str | None, BaseException | None], None]


async def follow_run(
    client: ServiceClient, run_id: str, tally: Tally, on_change: OnChange, on_drop: OnDrop
) -> dict[str, Any]:
    """Read the run's events into ``tally`` until ``run_completed``; its data is returned.

    A stream that drops (a broken connection, or an end before ``run_completed``) is opened
    again after the last event seen, so no event is missed or counted twice.

    Raises:
        ClientError: The server refused the stream, or kept dropping it without events.
    """
    last_id: str | None = None
    silent = 0
    while True:
        problem: BaseException | None = None
        got_event = False
        try:
            async for event in client.events(run_id, last_id):
                got_event = True
                if event.id is not None:
                    if last_id is not None and int(event.id) <= int(last_id):
                        continue  # a server replaying what we saw: never count it twice
                    last_id = event.id
                data = json.loads(event.data)
                if event.type == "case_completed":
                    tally.add(data)  # its progress event follows: shown then
                    continue
                tally.done, tally.total = int(data["done"]), int(data["total"])
                on_change(tally)
                if event.type == "run_completed":
                    completed: dict[str, Any] = data
                    return completed
        except httpx.TransportError as exc:
            problem = exc
        silent = 0 if got_event else silent + 1
        if silent > MAX_SILENT_RECONNECTS:
            raise ClientError(f"the event stream of {run_id} keeps dropping: {problem!r}")
        tally.reconnects += 1
        on_drop(last_id, problem)
        await asyncio.sleep(min(0.2 * silent, 5.0))
