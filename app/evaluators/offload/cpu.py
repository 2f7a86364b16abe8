"""CPU-heavy checks of one case run in a worker thread, under one budget for the case.

A pattern that backtracks (``regex`` graders, JSON Schema ``pattern``) or a large schema
would otherwise hold the event loop, and so every other request, for as long as it runs.
``CpuBudget.run`` calls the check in a worker thread (the ``regex`` engine lets go of the
GIL while it searches) and charges the time it took to the case; each check sees what is
left through ``seconds_left`` and stops there (its own limit is never longer than that).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

import anyio.to_thread

from app.errors import EvaluatorConfigError
from app.evaluators.offload.cpu_process import run_in_process

CASE_CPU_SECONDS = 2.0
"""What one case's CPU-heavy checks (regex graders, JSON Schema validation) may take in all."""

T = TypeVar("T")
_LEFT: ContextVar[float] = ContextVar("cpu_seconds_left", default=CASE_CPU_SECONDS)


def seconds_left(limit: float) -> float:
    """The time a check may take: its own ``limit``, or less when the case's budget is low."""
    return min(limit, _LEFT.get())


@dataclass
class CpuBudget:
    """The seconds a case's CPU-heavy checks have left (shared by all its graders)."""

    seconds: float = CASE_CPU_SECONDS

    @asynccontextmanager
    async def spending(self, name: str) -> AsyncIterator[float]:
        """Charge the time the block takes to the budget; it gets the seconds left.

        Raises:
            EvaluatorConfigError: The budget is spent (``name`` is the grader not run).
        """
        if self.seconds <= 0:
            raise EvaluatorConfigError(
                f"evaluator {name!r} was not run: the case's checks used up their "
                f"{CASE_CPU_SECONDS:g}s of CPU time (regex and JSON Schema checks share it)"
            )
        started = time.monotonic()
        try:
            yield self.seconds
        finally:
            self.seconds -= time.monotonic() - started

    async def run(self, name: str, check: Callable[[], T]) -> T:
        """``check()`` in a worker thread, its time charged to the budget (see ``spending``)."""
        async with self.spending(name) as left:

            def call() -> T:
                token = _LEFT.set(left)
                try:
                    return check()
                finally:
                    _LEFT.reset(token)

            return await anyio.to_thread.run_sync(call)

    async def run_in_process(self, name: str, function: Callable[..., T], *args: object) -> T:
        """``function(*args)`` in a CPU process (``cpu_process``), its time charged here.

        For pure Python work (templates): in a thread it would queue for the GIL with the
        event loop. ``function`` bounds its own time (it cannot see the budget). Only the
        time it ran is charged: not a process starting, nor the modules it imports first
        (on a loaded machine that took the whole budget of a case's first check).
        """
        started = time.monotonic()
        async with self.spending(name):
            outcome: tuple[T, float] = await run_in_process(timed_call, function, *args)
            result, took = outcome
            # ``spending`` charges the wall time: give back what was not the check's own.
            self.seconds += max(0.0, time.monotonic() - started - took)
            return result


def timed_call(function: Callable[..., T], *args: object) -> tuple[T, float]:
    """``function(*args)`` and the seconds it took (run in a CPU process: importable)."""
    started = time.monotonic()
    result = function(*args)
    return result, time.monotonic() - started
