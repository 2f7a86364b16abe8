"""Shared plumbing of the store: sessions, the SQLite write lock, times and cursors."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext, suppress
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from app.errors import InvalidRequest
from app.runs.database import check_schema


def utc_now() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


def aware(moment: datetime | None) -> datetime | None:
    """A stored time as UTC-aware (SQLite hands back naive datetimes)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def encode_cursor(*parts: Any) -> str:
    """An opaque pagination cursor holding ``parts``."""
    return base64.urlsafe_b64encode(json.dumps(parts).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, arity: int) -> list[Any]:
    """The parts of a cursor made by ``encode_cursor``; a 422 when it is not one."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        parts = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except ValueError as exc:
        raise InvalidRequest("cursor: not a cursor this service issued") from exc
    if not isinstance(parts, list) or len(parts) != arity:
        raise InvalidRequest("cursor: not a cursor this service issued")
    return parts


class StoreBase:
    """An engine, its sessions, and one writer at a time on SQLite.

    SQLite allows one writer; letting concurrent transactions collide makes them wait in its
    busy handler's sleeps, so writers of this process queue on an ``asyncio.Lock`` instead.
    PostgreSQL needs no such lock.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        self._write_lock = asyncio.Lock() if engine.dialect.name == "sqlite" else None
        # On PostgreSQL, cases are executed as jobs of a task queue in the same database.
        self.job_queue = engine.dialect.name == "postgresql"
        self._committed = asyncio.Event()

    def _session(self) -> AsyncSession:
        return self._sessions()

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[AsyncSession]:
        """A session inside one write transaction (committed on success)."""
        async with self._write_lock or nullcontext(), self._sessions() as session, session.begin():
            yield session
        self._signal_commit()

    @asynccontextmanager
    async def _writing_core(self) -> AsyncIterator[AsyncConnection]:
        """A Core connection inside one write transaction (the hot write path)."""
        async with self._write_lock or nullcontext(), self.engine.begin() as connection:
            yield connection
        self._signal_commit()

    def _signal_commit(self) -> None:
        """Wake those waiting for this process's next commit."""
        self._committed.set()
        self._committed = asyncio.Event()

    async def wait_for_commit(self, at_most_seconds: float) -> None:
        """Return after this process's next write commits, or after ``at_most_seconds``."""
        with suppress(TimeoutError):
            async with asyncio.timeout(at_most_seconds):
                await self._committed.wait()

    async def check_schema(self) -> None:
        """Raise ``SchemaNotCurrent`` unless the schema is at the latest migration."""
        await check_schema(self.engine)
