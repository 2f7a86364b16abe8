"""Request-rate buckets shared by every replica: one PostgreSQL row per caller.

One statement refills the caller's bucket by the time passed on the database's clock (so
replicas' clocks do not matter), takes a token if there is one, and says whether it did;
the row lock of the upsert makes concurrent requests of one caller take turns.

A row idle for as long as its bucket takes to fill again means the same as no row (a new
caller starts with a full bucket), so each process deletes such rows at most once a
``PRUNE_EVERY_SECONDS``: the table holds only the callers of the last minute or so, however
many keys or client addresses have come and gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncEngine

PRUNE_EVERY_SECONDS = 60.0

_REFILLED = (
    "LEAST($2::float8, b.tokens + EXTRACT(EPOCH FROM now() - b.updated)::float8 * $3::float8)"
)
TAKE_TOKEN = f"""
INSERT INTO rate_buckets AS b (key, tokens, granted, updated)
VALUES ($1, $2::float8 - 1, true, now())
ON CONFLICT (key) DO UPDATE SET
    tokens = {_REFILLED} - CASE WHEN {_REFILLED} >= 1 THEN 1 ELSE 0 END,
    granted = {_REFILLED} >= 1,
    updated = now()
RETURNING tokens, granted
"""
"""``$1`` the caller's key, ``$2`` the bucket's capacity, ``$3`` its refill per second. Every
``SET`` expression reads the row as it was; ``now()`` is the statement's own time (each
runs in a transaction of its own)."""


PRUNE_FULL = "DELETE FROM rate_buckets WHERE updated < now() - make_interval(secs => $1::float8)"
"""``$1`` the seconds an empty bucket takes to fill: rows idle longer are full buckets."""


class DatabaseRateBuckets:
    """Tokens taken from ``rate_buckets`` rows (PostgreSQL)."""

    def __init__(self, engine: AsyncEngine, clock: Callable[[], float] = time.monotonic) -> None:
        self._engine = engine
        self._clock = clock
        self._pruned = clock()

    async def take(self, key: str, capacity: float, refill_per_second: float) -> float:
        """Take one of ``key``'s tokens: 0, or the seconds until one is available."""
        prune = self._clock() - self._pruned >= PRUNE_EVERY_SECONDS
        async with self._engine.connect() as connection:
            connection = await connection.execution_options(isolation_level="AUTOCOMMIT")
            result = await connection.exec_driver_sql(
                TAKE_TOKEN, (key[:300], capacity, refill_per_second)
            )
            row = result.one()
            if prune:
                self._pruned = self._clock()
                await connection.exec_driver_sql(PRUNE_FULL, (capacity / refill_per_second,))
        return 0.0 if row.granted else (1 - float(row.tokens)) / refill_per_second
