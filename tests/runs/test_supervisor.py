"""RunSupervisor and the in-process executor over a real SQLite store and a scripted run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path

import pytest

from app.runs.executor import InProcessExecutor
from app.runs.models import StoredCase
from app.runs.storage.store import RunStore
from app.runs.supervisor import RunSupervisor
from tests.runs.builders import make_cases, make_new_run
from tests.runs.fakes import ScriptedRun, preparer_for


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[RunStore]:
    store = await RunStore.open(f"sqlite+aiosqlite:///{tmp_path / 'eval.db'}")
    try:
        yield store
    finally:
        await store.aclose()


def supervisor_for(store: RunStore, run: ScriptedRun) -> RunSupervisor:
    return RunSupervisor(store, InProcessExecutor(store, preparer_for(run)), max_active_runs=2)


async def wait_for_status(store: RunStore, run_id: str, *statuses: str) -> None:
    async with asyncio.timeout(10):
        while True:
            if (await store.get_run(run_id)).status in statuses:
                return
            await asyncio.sleep(0.01)


async def wait_for_done(store: RunStore, run_id: str, done: int) -> None:
    async with asyncio.timeout(10):
        while True:
            if (await store.get_run(run_id)).done >= done:
                return
            await asyncio.sleep(0.005)


async def test_a_submitted_run_completes_with_one_result_per_case(sqlite_store: RunStore) -> None:
    scripted = ScriptedRun(max_concurrency=3)
    supervisor = supervisor_for(sqlite_store, scripted)
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(25))
    supervisor.submit(run.id)
    await wait_for_status(sqlite_store, run.id, "completed")
    await supervisor.aclose()
    finished = await sqlite_store.get_run(run.id)
    assert (finished.done, finished.total) == (25, 25)
    assert finished.summary is not None
    assert finished.summary["counts"]["passed"] == 25
    assert sorted(scripted.started) == sorted(f"case-{i}" for i in range(25))
    events = await sqlite_store.events_after(run.id, 0, limit=100)
    assert events[-1].type == "run_completed"


async def test_cases_run_at_most_max_concurrency_at_once(sqlite_store: RunStore) -> None:
    scripted = ScriptedRun(delay=0.1, max_concurrency=3)
    supervisor = supervisor_for(sqlite_store, scripted)
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(9))
    supervisor.submit(run.id)
    await wait_for_status(sqlite_store, run.id, "completed")
    await supervisor.aclose()
    assert scripted.peak_in_flight == 3


async def test_cancel_starts_no_case_after_it_and_keeps_finished_results(
    sqlite_store: RunStore,
) -> None:
    scripted = ScriptedRun(delay=0.05, max_concurrency=2)
    supervisor = supervisor_for(sqlite_store, scripted)
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(40))
    supervisor.submit(run.id)
    await wait_for_done(sqlite_store, run.id, 4)
    cancelled = await supervisor.cancel(run.id)
    started_at_cancel = len(scripted.started)
    await asyncio.sleep(0.2)
    await supervisor.aclose()
    assert cancelled.status == "cancelled"
    assert len(scripted.started) == started_at_cancel
    assert 4 <= cancelled.done < 40
    kept = [json.loads(r) async for r in sqlite_store.iter_results(run.id)]
    assert len(kept) == cancelled.done


async def test_a_run_interrupted_by_shutdown_resumes_without_repeating_cases(
    sqlite_store: RunStore,
) -> None:
    first = ScriptedRun(delay=0.03, max_concurrency=2)
    supervisor = supervisor_for(sqlite_store, first)
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(20))
    supervisor.submit(run.id)
    await wait_for_done(sqlite_store, run.id, 5)
    await supervisor.aclose()
    interrupted = await sqlite_store.get_run(run.id)
    assert interrupted.status == "running"
    stored_before = {json.loads(r)["eval_id"] async for r in sqlite_store.iter_results(run.id)}

    second = ScriptedRun(max_concurrency=4)
    resumed = supervisor_for(sqlite_store, second)
    await resumed.start()
    await wait_for_status(sqlite_store, run.id, "completed")
    await resumed.aclose()
    records = [json.loads(r)["eval_id"] async for r in sqlite_store.iter_results(run.id)]
    assert sorted(records) == sorted(f"case-{i}" for i in range(20))
    assert not stored_before & set(second.started)


async def test_an_unexpected_case_failure_is_recorded_and_the_run_goes_on(
    sqlite_store: RunStore,
) -> None:
    scripted = ScriptedRun(fail_ids=frozenset({"case-1"}))
    supervisor = supervisor_for(sqlite_store, scripted)
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(3))
    supervisor.submit(run.id)
    await wait_for_status(sqlite_store, run.id, "completed")
    await supervisor.aclose()
    records = {
        json.loads(r)["eval_id"]: json.loads(r) async for r in sqlite_store.iter_results(run.id)
    }
    assert records["case-1"]["status"] == "error"
    assert records["case-1"]["error"] == "internal error: RuntimeError"
    assert records["case-0"]["status"] == "passed"


async def test_a_run_whose_spec_cannot_be_prepared_fails(sqlite_store: RunStore) -> None:
    supervisor = supervisor_for(sqlite_store, ScriptedRun())
    run, _ = await sqlite_store.create_run(make_new_run(spec={"broken": True}), make_cases(2))
    supervisor.submit(run.id)
    await wait_for_status(sqlite_store, run.id, "failed")
    await supervisor.aclose()
    failed = await sqlite_store.get_run(run.id)
    assert failed.error == "ValueError: the stored spec cannot be prepared"


async def test_submitting_a_run_twice_runs_each_case_once(sqlite_store: RunStore) -> None:
    scripted = ScriptedRun(delay=0.01, max_concurrency=2)
    supervisor = supervisor_for(sqlite_store, scripted)
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(6))
    supervisor.submit(run.id)
    supervisor.submit(run.id)
    await wait_for_status(sqlite_store, run.id, "completed")
    await asyncio.sleep(0.05)
    await supervisor.aclose()
    assert sorted(scripted.started) == sorted(f"case-{i}" for i in range(6))
    assert not supervisor.is_running_here(run.id)


async def test_a_cancelled_run_submitted_again_stays_cancelled(sqlite_store: RunStore) -> None:
    scripted = ScriptedRun()
    supervisor = supervisor_for(sqlite_store, scripted)
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(3))
    await supervisor.cancel(run.id)
    supervisor.submit(run.id)
    await asyncio.sleep(0.1)
    await supervisor.aclose()
    assert scripted.started == []
    assert (await sqlite_store.get_run(run.id)).status == "cancelled"


async def test_the_feeder_reads_the_next_batch_of_cases_while_it_hands_out_this_one(
    sqlite_store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.runs.executor.PENDING_BATCH", 4)
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(10))
    reads: list[int] = []
    second_read = asyncio.Event()
    read = sqlite_store.pending_cases

    async def counted(run_id: str, *, after: int, limit: int) -> list[StoredCase]:
        reads.append(after)
        if len(reads) == 2:
            second_read.set()
        return await read(run_id, after=after, limit=limit)

    monkeypatch.setattr(sqlite_store, "pending_cases", counted)
    executor = InProcessExecutor(sqlite_store, preparer_for(ScriptedRun()))
    async with aclosing(executor._pending(run.id)) as pending:
        first = await anext(pending)
        async with asyncio.timeout(5):  # nobody asks for a second case, yet it is being read
            await second_read.wait()
        rest = [case async for case in pending]
    assert [case.seq for case in [first, *rest]] == list(range(10))
    assert reads == [-1, 3, 7]


async def test_the_feeder_stops_at_a_cancel_request_and_waits_for_its_read(
    sqlite_store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.runs.executor.PENDING_BATCH", 4)
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(10))
    executor = InProcessExecutor(sqlite_store, preparer_for(ScriptedRun()))
    async with aclosing(executor._pending(run.id)) as pending:
        seen = [await anext(pending) for _ in range(4)]
        await sqlite_store.request_cancel(run.id)
        seen += [case async for case in pending]
    # The second batch may have been read before the cancel; none is read after it.
    assert [case.seq for case in seen] in (list(range(4)), list(range(8)))
