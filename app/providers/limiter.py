"""An adaptive concurrency limit per target and role (additive increase, halving on 429)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from pydantic import BaseModel

RECENT_WINDOW_SECONDS = 60.0
MIN_SUCCESSES_TO_GROW = 5


class LimiterState(BaseModel):
    """A snapshot of one limiter, as ``GET /targets`` shows it."""

    limit: int
    max_limit: int
    in_flight: int
    waiting: int
    recent_429s: int


class Limiter(Protocol):
    """What a target's runtime needs of a concurrency limit (in-process or fleet-wide)."""

    def slot(self) -> AbstractAsyncContextManager[None]:
        """Hold one slot for the duration of the block."""
        ...

    def record_success(self) -> None:
        """A call succeeded."""
        ...

    def record_rate_limited(self) -> None:
        """The provider answered 429."""
        ...

    def state(self) -> LimiterState:
        """A snapshot for ``GET /targets`` and ``/metrics``."""
        ...


LimiterFactory = Callable[[str, str, int], Limiter]
"""Builds the limiter of ``(target, role, max_limit)``; ``AdaptiveLimiter`` when none is given."""


def local_limiter(_target: str, _role: str, max_limit: int) -> Limiter:
    """An in-process ``AdaptiveLimiter`` (the embedded default)."""
    return AdaptiveLimiter(max_limit)


class AdaptiveLimiter:
    """Caps calls in flight; a 429 halves the limit, sustained success raises it by one.

    "Sustained" means as many successes in a row as the current limit (about one round of
    calls without push-back), and at least ``MIN_SUCCESSES_TO_GROW``, so the limit climbs back
    gradually after a burst of 429s.
    """

    def __init__(self, max_limit: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if max_limit < 1:
            raise ValueError("max_limit must be at least 1")
        self.max_limit = max_limit
        self.limit = max_limit
        self.in_flight = 0
        self._successes = 0
        self._rate_limited_at: deque[float] = deque()
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._clock = clock

    def slot(self) -> AbstractAsyncContextManager[None]:
        """Hold one slot for the duration of the block."""
        return _Slot(self)

    async def acquire(self) -> None:
        """Wait until a call may start, then count it in flight."""
        while self.in_flight >= self.limit:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                else:
                    self._wake()  # pass on the wake-up this task will not use
                raise
        self.in_flight += 1

    def release(self) -> None:
        """Count one call as finished and let waiters in."""
        self.in_flight -= 1
        self._wake()

    def record_success(self) -> None:
        """A call succeeded: after a run of successes, allow one more call in flight."""
        self._successes += 1
        needed = max(self.limit, MIN_SUCCESSES_TO_GROW)
        if self._successes >= needed and self.limit < self.max_limit:
            self.limit += 1
            self._successes = 0
            self._wake()

    def record_rate_limited(self) -> None:
        """The provider answered 429: halve the limit (never below one)."""
        self._successes = 0
        self.limit = max(1, self.limit // 2)
        self._rate_limited_at.append(self._clock())

    def state(self) -> LimiterState:
        """The current limit, calls in flight and waiting, and 429s in the last minute."""
        return LimiterState(
            limit=self.limit,
            max_limit=self.max_limit,
            in_flight=self.in_flight,
            waiting=len(self._waiters),
            recent_429s=count_recent(self._rate_limited_at, self._clock()),
        )

    def _wake(self) -> None:
        free = self.limit - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1


def count_recent(times: deque[float], now: float) -> int:
    """How many of these (ascending) times fall in the last ``RECENT_WINDOW_SECONDS``.

    Older ones are dropped from ``times``.
    """
    horizon = now - RECENT_WINDOW_SECONDS
    while times and times[0] < horizon:
        times.popleft()
    return len(times)


class _Slot(AbstractAsyncContextManager[None]):
    """One slot of an ``AdaptiveLimiter``, held for a block.

    Every provider call enters one, so this is a plain class, not a generator-based manager.
    """

    __slots__ = ("_limiter",)

    def __init__(self, limiter: AdaptiveLimiter) -> None:
        self._limiter = limiter

    async def __aenter__(self) -> None:
        await self._limiter.acquire()

    async def __aexit__(self, *_exc: object) -> None:
        self._limiter.release()
