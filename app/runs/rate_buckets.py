"""Request-rate buckets shared by every replica: one PostgreSQL row per caller.

One statement refills the caller's bucket by the time passed on the database's clock (so
replicas' clocks do not matter), takes a token if there is one, and says whether it did;
the row lock of the upsert makes concurrent requests of one caller take turns.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

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


class DatabaseRateBuckets:
    """Tokens taken from ``rate_buckets`` rows (PostgreSQL)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def take(self, key: str, capacity: float, refill_per_second: float) -> float:
        """Take one of ``key``'s tokens: 0, or the seconds until one is available."""
        async with self._engine.connect() as connection:
            connection = await connection.execution_options(isolation_level="AUTOCOMMIT")
            result = await connection.exec_driver_sql(
                TAKE_TOKEN, (key[:300], capacity, refill_per_second)
            )
            row = result.one()
        return 0.0 if row.granted else (1 - float(row.tokens)) / refill_per_second
