"""Fixtures of the runs tests: a real store on a SQLite file, and on PostgreSQL when reachable."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from app.runs.database import create_engine
from app.runs.postgres.jobs import uninstall_queue_schema
from app.runs.storage.store import RunStore
from app.runs.tables import Base

POSTGRES_URL_VARIABLE = "EVAL_TEST_POSTGRES_URL"


def postgres_url() -> str | None:
    """The URL of the test PostgreSQL, if one is configured."""
    return os.environ.get(POSTGRES_URL_VARIABLE) or None  # noqa: TID251


async def _reset_postgres(url: str) -> None:
    engine = create_engine(url)
    try:
        async with asyncio.timeout(5), engine.begin() as connection:
            await connection.run_sync(Base.metadata.drop_all)
            await connection.run_sync(uninstall_queue_schema)
            await connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    finally:
        await engine.dispose()


async def _open_postgres_store() -> RunStore:
    url = postgres_url()
    if url is None:
        pytest.skip(f"PostgreSQL tests need {POSTGRES_URL_VARIABLE} (see scripts/ci_postgres.sh)")
    try:
        await _reset_postgres(url)
    except (OSError, TimeoutError) as exc:
        pytest.skip(f"PostgreSQL at {POSTGRES_URL_VARIABLE} is not reachable: {exc}")
    return await RunStore.open(url)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunStore]:
    """A migrated, empty store on a SQLite file or on the test PostgreSQL."""
    if request.param == "sqlite":
        opened = await RunStore.open(f"sqlite+aiosqlite:///{tmp_path / 'eval.db'}")
    else:
        opened = await _open_postgres_store()
    try:
        yield opened
    finally:
        await opened.aclose()
