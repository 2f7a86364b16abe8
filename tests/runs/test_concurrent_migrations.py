"""Processes started together on an empty PostgreSQL database migrate it once between them.

Five real processes each open the store (which migrates) at the same instant: without the
advisory lock two of them create Alembic's table at once and all but one fail with a
unique violation on ``pg_type`` (seen in 7 of 9 container start-ups).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.runs.storage.store import RunStore
from testkit.server import ROOT
from tests.runs.conftest import POSTGRES_URL_VARIABLE, _reset_postgres, postgres_url

pytestmark = pytest.mark.postgres
PROCESSES = 5

# Each process imports everything first, says it is ready, then waits for the signal: the
# five migrations start within a millisecond or so of each other.
MIGRATE_ON_SIGNAL = """
import asyncio, os, sys, time
from pathlib import Path
from app.runs.storage.store import RunStore

ready, go = Path(sys.argv[1]), Path(sys.argv[2])
ready.touch()
while not go.exists():
    time.sleep(0.001)

async def main() -> None:
    store = await RunStore.open(sys.argv[3])
    await store.aclose()

asyncio.run(main())
"""


def test_five_processes_started_together_on_an_empty_database_all_start(tmp_path: Path) -> None:
    url = postgres_url()
    if url is None:
        pytest.skip(f"PostgreSQL tests need {POSTGRES_URL_VARIABLE}")
    asyncio.run(_reset_postgres(url))
    go = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATE_ON_SIGNAL, str(tmp_path / f"ready-{i}"), str(go), url],
            cwd=ROOT,
            stderr=subprocess.PIPE,
        )
        for i in range(PROCESSES)
    ]
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"ready-{i}").exists() for i in range(PROCESSES)):
            assert time.monotonic() < deadline, "the processes did not start"
            assert all(process.poll() is None for process in processes)
            time.sleep(0.01)
        go.touch()
        outcomes = [(process.wait(timeout=60), process.communicate()[1]) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    failed = [err.decode()[-2000:] for code, err in outcomes if code != 0]
    assert failed == []

    async def schema_is_current() -> None:
        store = await RunStore.open(url)
        try:
            await store.check_schema()
        finally:
            await store.aclose()

    asyncio.run(schema_is_current())
