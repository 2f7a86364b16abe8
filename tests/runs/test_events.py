"""SSE events of a run: a stream dropped mid-run resumes after Last-Event-ID, no gap or repeat."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.runs.executor import InProcessExecutor
from app.runs.storage.events import parse_last_event_id, stream_run_events
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


async def test_a_stream_dropped_mid_run_resumes_without_gaps_or_repeats(
    sqlite_store: RunStore,
) -> None:
    scripted = ScriptedRun(delay=0.02, max_concurrency=2)
    supervisor = RunSupervisor(
        sqlite_store, InProcessExecutor(sqlite_store, preparer_for(scripted)), max_active_runs=1
    )
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(12))
    supervisor.submit(run.id)
    seen: list[int] = []
    first = stream_run_events(sqlite_store, run.id, after=0, poll_seconds=0.01)
    async for event in first:
        seen.append(event.seq)
        if len(seen) == 5:
            break
    await first.aclose()
    assert (await sqlite_store.get_run(run.id)).status == "running"
    types = []
    async for event in stream_run_events(sqlite_store, run.id, after=seen[-1], poll_seconds=0.01):
        seen.append(event.seq)
        types.append(event.type)
    await supervisor.aclose()
    assert seen == list(range(1, 26))
    assert types[-1] == "run_completed"
    finished = await sqlite_store.events_after(run.id, 24)
    assert json.loads(finished[0].data)["status"] == "completed"


async def test_a_finished_run_streams_nothing_after_its_last_event(sqlite_store: RunStore) -> None:
    run, _ = await sqlite_store.create_run(make_new_run(), make_cases(1))
    await sqlite_store.finish_run(run.id, "cancelled", {})
    assert [e.seq async for e in stream_run_events(sqlite_store, run.id, after=1)] == []
    assert [e.type async for e in stream_run_events(sqlite_store, run.id, after=0)] == [
        "run_completed"
    ]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, 0),
        ("17", 17),
        (" 3 ", 3),
        ("abc", 0),
        ("-4", 0),
        ("\u00b2", 0),
        ("\u0661", 0),
        ("99999999999999999999999", 0),
        (str(2**63 - 1), 2**63 - 1),
        (str(2**63), 0),
    ],
    ids=[
        "absent",
        "number",
        "spaces",
        "not-a-number",
        "negative",
        "superscript",
        "arabic-indic",
        "huge",
        "largest",
        "past-64-bits",
    ],
)
def test_last_event_id_is_read_leniently(header: str | None, expected: int) -> None:
    assert parse_last_event_id(header) == expected
