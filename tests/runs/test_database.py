"""The PostgreSQL engine's pool: a checkout pings without a transaction, and a dead
connection is replaced before anyone uses it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.runs.database import create_engine
from tests.runs.conftest import POSTGRES_URL_VARIABLE, postgres_url

pytestmark = pytest.mark.postgres


@pytest.fixture
async def engine() -> AsyncIterator[AsyncEngine]:
    url = postgres_url()
    if url is None:
        pytest.skip(f"PostgreSQL tests need {POSTGRES_URL_VARIABLE} (see scripts/ci_postgres.sh)")
    opened = create_engine(url)
    try:
        yield opened
    finally:
        await opened.dispose()


async def _backend_pid(engine: AsyncEngine) -> int:
    async with engine.connect() as connection:
        return int((await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one())


async def test_a_checkout_pings_without_a_transaction_of_its_own(engine: AsyncEngine) -> None:
    sent: list[str] = []
    async with engine.connect() as connection:
        raw = (await connection.get_raw_connection()).driver_connection
        assert raw is not None
    raw.add_query_logger(lambda record: sent.append(record.query))
    async with engine.connect() as connection:  # the same pooled connection, checked out again
        await connection.execute(text("SELECT 2"))
    # The ping, then the session's own transaction: SQLAlchemy's pre-ping would have sent
    # BEGIN, ";" and ROLLBACK of its own first.
    assert sent[sent.index("SELECT 1") :] == ["SELECT 1", "BEGIN;", "ROLLBACK;"]


async def test_a_pooled_connection_whose_server_session_ended_is_replaced(
    engine: AsyncEngine,
) -> None:
    pid = await _backend_pid(engine)
    killer = create_engine(str(engine.url.render_as_string(hide_password=False)))
    try:
        async with killer.connect() as connection:
            await connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    finally:
        await killer.dispose()
    assert await _backend_pid(engine) != pid
