"""Time limits that share one event-loop timer: ``time_limit`` is ``asyncio.timeout`` made cheap.

A case runs under up to five nested time limits (its own, and per provider call a deadline
and an attempt limit). ``asyncio.timeout`` arms a loop timer on entry and cancels it on exit;
on the mock target those timers cost about a tenth of ``evaluate_case``'s CPU, though
almost none of them ever fires (docs/design.md has the figures).

Here the limits of one loop wait in one heap, and one loop timer is armed for the earliest of
them. Entering a limit pushes it on the heap (re-arming the timer only when it ends before the
armed one); leaving a limit only marks it. The heap is pruned of left limits when they
outnumber the live ones. A limit that fires cancels its task and, as with ``asyncio.timeout``,
the ``CancelledError`` leaving its block becomes ``TimeoutError``; a cancellation from
elsewhere passes through unchanged. A loop's timer holds the loop and its handle weakly and a
left limit lets go of its task, so a closed loop is freed with its timer.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from types import TracebackType
from typing import Final

_PRUNE_SLACK: Final = 64
"""A heap is pruned when it holds this many entries more than twice its live ones at the
last pruning: each pruning is paid for by as many pushes as it keeps entries."""

_WAITING, _LEFT, _FIRED = 0, 1, 2


class TimeLimit:
    """An async context manager that cancels its task at ``when`` (loop time) if still inside.

    Use ``time_limit(seconds)``; ``None`` never fires.
    """

    __slots__ = ("_cancelling", "_state", "_task", "when")

    def __init__(self, when: float | None) -> None:
        self.when = when
        self._task: asyncio.Task[object] | None = None
        self._state = _WAITING
        self._cancelling = 0

    async def __aenter__(self) -> TimeLimit:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("time_limit() is entered inside a task")
        if self._task is not None or self._state != _WAITING:
            raise RuntimeError("a time limit is entered once")
        self._task = task
        self._cancelling = task.cancelling()
        if self.when is not None:
            _timer_of(task.get_loop()).add(self)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._state != _FIRED:
            self._state = _LEFT
            self._task = None  # a left entry may wait on the heap: it holds no task
            return
        assert self._task is not None
        if self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc

    def expired(self) -> bool:
        """Whether this limit fired (its block then raised ``TimeoutError``)."""
        return self._state == _FIRED

    def _fire(self) -> None:
        self._state = _FIRED
        assert self._task is not None
        self._task.cancel()


def time_limit(seconds: float | None) -> TimeLimit:
    """A limit of ``seconds`` from now on the running loop's clock (``None``: no limit)."""
    if seconds is None:
        return TimeLimit(None)
    return TimeLimit(asyncio.get_running_loop().time() + seconds)


class _SharedTimer:
    """One loop's waiting limits, earliest first, and the one loop timer armed for them."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # Weak: the registry's key is the loop, which a strong reference would keep alive.
        self._loop = weakref.ref(loop)
        self._heap: list[tuple[float, int, TimeLimit]] = []
        self._order = itertools.count()
        self._handle: weakref.ref[asyncio.TimerHandle] | None = None
        self._armed_for = float("inf")
        self._prune_at = _PRUNE_SLACK

    def add(self, limit: TimeLimit) -> None:
        when = limit.when
        assert when is not None
        heap = self._heap
        heapq.heappush(heap, (when, next(self._order), limit))
        if when < self._armed_for:
            self._arm(when)
        if len(heap) >= self._prune_at:
            self._prune()

    def _prune(self) -> None:
        live = [entry for entry in self._heap if entry[2]._state == _WAITING]
        heapq.heapify(live)
        self._heap = live
        self._prune_at = 2 * len(live) + _PRUNE_SLACK

    def _arm(self, when: float) -> None:
        armed = self._handle() if self._handle is not None else None
        if armed is not None:
            armed.cancel()
        loop = self._loop()
        assert loop is not None  # a limit is entered on a running loop
        self._armed_for = when
        self._handle = weakref.ref(loop.call_at(when, self._expire))

    def _expire(self) -> None:
        self._handle = None
        self._armed_for = float("inf")
        heap = self._heap
        loop = self._loop()
        assert loop is not None  # the loop runs this
        now = loop.time()
        while heap:
            when, _, limit = heap[0]
            if limit._state != _WAITING:
                heapq.heappop(heap)
            elif when <= now:
                heapq.heappop(heap)
                limit._fire()
            else:
                self._arm(when)
                return


_TIMERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _SharedTimer] = (
    weakref.WeakKeyDictionary()
)


def _timer_of(loop: asyncio.AbstractEventLoop) -> _SharedTimer:
    timer = _TIMERS.get(loop)
    if timer is None:
        timer = _TIMERS[loop] = _SharedTimer(loop)
    return timer
