"""Cancelling a run never fails on a busy database: recorded and honoured (issue 34).

Before, a cancel arriving while another writer held SQLite answered 500 (``database is
locked``) after 31 s and left the run ``running``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from app.runs import supervisor
from testkit.fake_llm import FakeLLM
from tests.api.test_runs import candidate_calls, fake_settings, suite_with, wait_for_done
from tests.conftest import ClientFactory, wait_for_run


async def test_cancel_on_a_locked_database_is_honoured_then_written(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor, "CANCEL_WAIT_SECONDS", 0.5)
    fake_llm.latency = 0.1
    settings = fake_settings(tmp_path, fake_llm)
    async with make_client(settings) as client:
        body = {"suite": suite_with(40), "target": "fake", "max_concurrency": 2}
        run_id = (await client.post("/runs", json=body)).json()["id"]
        await wait_for_done(client, run_id, 2)
        holder = sqlite3.connect(tmp_path / "data" / "eval.db", timeout=60)
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the database
        try:
            started = time.perf_counter()
            cancelled = await client.post(f"/runs/{run_id}/cancel")
            took = time.perf_counter() - started
            await asyncio.sleep(0.3)
            calls_at_cancel = len(candidate_calls(fake_llm))
            await asyncio.sleep(0.5)
            assert len(candidate_calls(fake_llm)) == calls_at_cancel  # honoured at once
        finally:
            holder.rollback()
            holder.close()
        assert cancelled.status_code == 200, cancelled.text
        assert took < 10, took
        run = await wait_for_run(client, run_id)  # written once the database is free
        assert run["status"] == "cancelled"
        assert run["progress"]["done"] < 40
