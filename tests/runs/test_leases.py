"""Run leases: one replica executes a run at a time; a dead replica's runs are taken over."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.runs.executor import InProcessExecutor
from app.runs.store import RunStore
from app.runs.supervisor import RunSupervisor
from tests.runs.builders import make_cases, make_new_run
from tests.runs.fakes import ScriptedRun, preparer_for


async def test_a_lease_is_held_by_one_replica_until_released_or_expired(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(1))
    assert await store.claim_run(run.id, "a", 30)
    assert not await store.claim_run(run.id, "b", 30)
    assert await store.claim_run(run.id, "a", 30)  # renewing its own lease
    assert await store.claimable_run_ids("b") == []
    await store.release_run(run.id, "a")
    assert await store.claimable_run_ids("b") == [run.id]
    assert await store.claim_run(run.id, "b", 0.05)
    await asyncio.sleep(0.1)
    assert await store.claim_run(run.id, "a", 30)  # b's lease expired


@pytest.fixture
async def two_replicas(tmp_path: Path) -> AsyncIterator[tuple[RunStore, RunStore]]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    first, second = await RunStore.open(url), await RunStore.open(url)
    try:
        yield first, second
    finally:
        await first.aclose()
        await second.aclose()


def replica(store: RunStore, run: ScriptedRun, name: str, lease: float) -> RunSupervisor:
    executor = InProcessExecutor(store, preparer_for(run))
    return RunSupervisor(store, executor, max_active_runs=2, holder=name, lease_seconds=lease)


async def wait_for_status(store: RunStore, run_id: str, status: str) -> None:
    async with asyncio.timeout(10):
        while (await store.get_run(run_id)).status != status:  # noqa: ASYNC110 - polls a database
            await asyncio.sleep(0.02)


async def test_a_run_executing_on_one_replica_is_not_started_by_another(two_replicas) -> None:
    store_a, store_b = two_replicas
    work_a, work_b = ScriptedRun(delay=0.05, max_concurrency=2), ScriptedRun(max_concurrency=2)
    a, b = replica(store_a, work_a, "a", 30), replica(store_b, work_b, "b", 30)
    run, _ = await store_a.create_run(make_new_run(), make_cases(10))
    a.submit(run.id)
    await asyncio.sleep(0.05)
    await b.start()  # a replica starting up resumes only runs nobody holds
    b.submit(run.id)
    await wait_for_status(store_a, run.id, "completed")
    await a.aclose()
    await b.aclose()
    assert work_b.started == []
    assert sorted(work_a.started) == sorted(f"case-{i}" for i in range(10))


async def test_a_dead_replicas_run_is_taken_over_when_its_lease_expires(two_replicas) -> None:
    store_a, store_b = two_replicas
    work_b = ScriptedRun(max_concurrency=2)
    run, _ = await store_a.create_run(make_new_run(), make_cases(6))
    assert await store_a.claim_run(run.id, "a", 0.3)  # "a" claimed it, then died
    b = replica(store_b, work_b, "b", 0.6)
    await b.start()
    assert work_b.started == []
    await wait_for_status(store_b, run.id, "completed")
    await b.aclose()
    assert sorted(work_b.started) == sorted(f"case-{i}" for i in range(6))


async def test_a_cancel_made_through_another_replica_stops_the_executing_one(two_replicas) -> None:
    store_a, store_b = two_replicas
    work_a = ScriptedRun(delay=0.1, max_concurrency=1)
    a = replica(store_a, work_a, "a", 3)
    b = replica(store_b, ScriptedRun(), "b", 3)
    run, _ = await store_a.create_run(make_new_run(), make_cases(50))
    a.submit(run.id)
    await asyncio.sleep(0.3)
    await b.cancel(run.id)
    await asyncio.sleep(1.2)  # a's heartbeat (every second) has seen the cancel by now
    started = len(work_a.started)
    await asyncio.sleep(0.5)
    await a.aclose()
    await b.aclose()
    assert (await store_a.get_run(run.id)).status == "cancelled"
    assert len(work_a.started) == started < 50
