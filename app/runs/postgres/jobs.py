"""Cases as jobs of pgqueuer's queue, on PostgreSQL (the store calls this; workers run them).

One job per case, its payload ``<run id>:<case number>`` and the same text as its dedupe
key, so a case is queued at most once at a time. Jobs are inserted with pgqueuer's own
query on the store's connection, inside the transaction that stores the run (or reopens it
for a retry): a run is never stored without its jobs, nor jobs without their run.
Cancelling a run deletes its jobs in the transaction that flags it, so no worker can claim
one afterwards, and tells the workers holding its picked jobs (pgqueuer's cancellation
event) to stop them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, cast
from uuid import UUID

import orjson
from pgqueuer.adapters.persistence.qb import QueryBuilderEnvironment, QueryQueueBuilder
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.util import await_only

ENTRYPOINT = "eval.case"
NOTIFY_IDS_PER_EVENT = 400
"""Job ids per cancellation event: a NOTIFY payload holds at most 8000 bytes."""


@cache
def _schema() -> QueryBuilderEnvironment:
    return QueryBuilderEnvironment()


@cache
def _queue() -> QueryQueueBuilder:
    return QueryQueueBuilder()


def asyncpg_dsn(url: str) -> str:
    """The plain ``postgresql://`` DSN of a SQLAlchemy ``postgresql+asyncpg://`` URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def job_key(run_id: str, seq: int) -> str:
    """A case's job payload and dedupe key."""
    return f"{run_id}:{seq}"


def parse_job_key(payload: bytes) -> tuple[str, int]:
    """``(run id, case number)`` of a job payload."""
    run_id, _, seq = payload.decode().rpartition(":")
    return run_id, int(seq)


def _script(connection: Connection, sql: str) -> None:
    """Run a multi-statement script on the raw asyncpg connection, in the transaction."""
    raw: Any = connection.connection.driver_connection
    await_only(raw.execute(sql))


def install_queue_schema(connection: Connection) -> None:
    """Create pgqueuer's tables, types and trigger (a migration, on PostgreSQL)."""
    _script(connection, _schema().build_install_query())


def uninstall_queue_schema(connection: Connection) -> None:
    """Drop pgqueuer's objects (reverting the migration)."""
    _script(connection, _schema().build_uninstall_query())


async def _raw(session: AsyncSession) -> Any:
    """The asyncpg connection under the session, inside its transaction."""
    connection = await session.connection()
    raw = await connection.get_raw_connection()
    return raw.driver_connection


async def enqueue_cases(session: AsyncSession, run_id: str, seqs: Sequence[int]) -> None:
    """Queue one job per case, in the session's transaction (a case already queued is kept)."""
    if not seqs:
        return
    keys = [job_key(run_id, seq) for seq in seqs]
    count = len(keys)
    raw = await _raw(session)
    await raw.fetch(
        _queue().build_enqueue_query("skip"),
        [0] * count,
        [ENTRYPOINT] * count,
        [key.encode() for key in keys],
        [timedelta(0)] * count,
        keys,
        [None] * count,
    )


async def delete_run_jobs(session: AsyncSession, run_id: str) -> None:
    """Delete a run's jobs (logged ``canceled``) and tell the workers running some to stop."""
    raw = await _raw(session)
    settings = _queue().settings
    rows = await raw.fetch(
        f"SELECT id, status::text AS status FROM {settings.queue_table} "
        "WHERE entrypoint = $1 AND starts_with(dedupe_key, $2)",
        ENTRYPOINT,
        f"{run_id}:",
    )
    if not rows:
        return
    ids = [row["id"] for row in rows]
    await raw.execute(
        _queue().build_log_job_query(), ids, ["canceled"] * len(ids), [None] * len(ids)
    )
    picked = [row["id"] for row in rows if row["status"] == "picked"]
    for start in range(0, len(picked), NOTIFY_IDS_PER_EVENT):
        event = {
            "channel": settings.channel,
            "type": "cancellation_event",
            "sent_at": datetime.now(UTC).isoformat(),
            "ids": picked[start : start + NOTIFY_IDS_PER_EVENT],
        }
        await raw.execute(
            "SELECT pg_notify($1, $2)", settings.channel, orjson.dumps(event).decode()
        )


async def count_jobs(session: AsyncSession) -> dict[str, int]:
    """Case jobs by status (``queued``, ``picked``): the queue's depth and its claims."""
    raw = await _raw(session)
    table = _queue().settings.queue_table
    rows = await raw.fetch(
        f"SELECT status::text AS status, count(*) AS n FROM {table} "
        "WHERE entrypoint = $1 GROUP BY status",
        ENTRYPOINT,
    )
    return {cast(str, row["status"]): int(row["n"]) for row in rows}


async def runs_without_jobs(session: AsyncSession, run_ids: Sequence[str]) -> list[str]:
    """Of these runs, those with no case queued or picked."""
    if not run_ids:
        return []
    raw = await _raw(session)
    table = _queue().settings.queue_table
    rows = await raw.fetch(
        f"SELECT r.id FROM unnest($2::text[]) AS r(id) WHERE NOT EXISTS ("
        f"SELECT 1 FROM {table} q WHERE q.entrypoint = $1 "
        "AND starts_with(q.dedupe_key, r.id || ':'))",
        ENTRYPOINT,
        list(run_ids),
    )
    return [cast(str, row["id"]) for row in rows]


async def release_jobs_of(connection: Any, queue_manager_id: UUID) -> int:
    """Put back in the queue the jobs a worker's lost manager still holds; how many.

    Its cases in flight have ended by then (stored, or not), but saying so needed the
    connection that was lost. A case stored already is not stored again when it runs again.
    """
    table = _queue().settings.queue_table
    rows = await connection.fetch(
        f"UPDATE {table} SET status = 'queued', queue_manager_id = NULL, "
        "execute_after = now(), updated = now() "
        "WHERE queue_manager_id = $1 AND status = 'picked' RETURNING id",
        queue_manager_id,
    )
    return len(rows)
