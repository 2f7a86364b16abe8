"""Per-key limits: a request rate (a token bucket per key) and runs in flight.

The buckets live in the process, or, once ``share`` gives the limiter shared buckets (the
database's, on PostgreSQL), there: then every replica takes from the same bucket and a key's
rate holds for the whole fleet. Should the shared buckets fail, the process's own stand in
(logged), so a database hiccup does not refuse every request.
"""

from __future__ import annotations

import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from app.errors import TooManyRequests
from app.settings import Settings

logger = logging.getLogger("app.api.middleware.ratelimit")

RUN_CAPACITY_RETRY_AFTER_SECONDS = 30
MAX_TRACKED_KEYS = 10_000


class SharedBuckets(Protocol):
    """Token buckets every replica shares."""

    async def take(self, key: str, capacity: float, refill_per_second: float) -> float:
        """Take one of ``key``'s tokens: 0, or the seconds until one is available."""


class HasCallerId(Protocol):
    """Anything with the caller's stable id (``None`` when authentication is off)."""

    @property
    def id(self) -> str | None:
        """The caller's stable, non-secret id."""


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RequestRateLimiter:
    """A token bucket per key: ``per_minute`` requests of burst, refilled evenly over a minute."""

    def __init__(
        self,
        per_minute: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = MAX_TRACKED_KEYS,
    ) -> None:
        self.capacity = float(per_minute)
        self.refill_per_second = per_minute / 60.0
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._shared: SharedBuckets | None = None

    def share(self, buckets: SharedBuckets) -> None:
        """Take tokens from ``buckets`` from now on (the process's own stand in on failure)."""
        self._shared = buckets

    @property
    def enabled(self) -> bool:
        """Whether any rate is enforced (``per_minute`` above 0)."""
        return self.capacity > 0

    def take(self, key: str) -> float:
        """Spend one token of ``key``'s bucket.

        Returns:
            0 when the request may proceed, else the seconds until a token is available.
        """
        if not self.enabled:
            return 0.0
        now = self._clock()
        bucket = self._buckets.pop(key, None) or _Bucket(self.capacity, now)
        bucket.tokens = min(
            self.capacity, bucket.tokens + (now - bucket.updated) * self.refill_per_second
        )
        bucket.updated = now
        self._buckets[key] = bucket  # most recently used last
        while len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.refill_per_second

    async def check(self, key: str) -> None:
        """Spend one token, or refuse with 429 and ``Retry-After``.

        Raises:
            TooManyRequests: the key has used up its rate for now.
        """
        if not self.enabled:
            return
        wait = await self._take_shared(key) if self._shared is not None else self.take(key)
        if wait > 0:
            per_minute = int(self.capacity)
            raise TooManyRequests(
                f"more than {per_minute} requests per minute; retry in {math.ceil(wait)} s",
                title="Request rate limit exceeded",
                headers={"Retry-After": str(max(1, math.ceil(wait)))},
            )

    async def _take_shared(self, key: str) -> float:
        assert self._shared is not None
        try:
            return await self._shared.take(key, self.capacity, self.refill_per_second)
        except Exception:  # the database is unreachable: this process's bucket stands in
            logger.warning("shared rate buckets failed; using this process's", exc_info=True)
            return self.take(key)


def ensure_run_capacity(caller: HasCallerId, in_flight: int, settings: Settings) -> None:
    """Refuse a new run when the caller already has the most runs in flight allowed.

    Args:
        caller: who asks (their runs are counted per key; all callers share one count when
            authentication is off).
        in_flight: the caller's runs queued or running now.
        settings: read for ``max_runs_in_flight_per_key`` (0: no limit).

    Raises:
        TooManyRequests: 429 with ``Retry-After``.
    """
    limit = settings.max_runs_in_flight_per_key
    if limit and in_flight >= limit:
        owner = "this API key" if caller.id else "all callers"
        raise TooManyRequests(
            f"{in_flight} runs of {owner} are queued or running; the limit is {limit}. "
            "Wait for one to finish or cancel one.",
            title="Too many runs in flight",
            headers={"Retry-After": str(RUN_CAPACITY_RETRY_AFTER_SECONDS)},
            extra={"runs_in_flight": in_flight, "limit": limit},
        )
