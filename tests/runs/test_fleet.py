"""Runs on PostgreSQL: cases as queue jobs, fleet-wide limits, cancel, reconcile (in-process)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest

from app.runs.postgres import fleet
from app.runs.postgres.fleet import FleetRuns
from app.runs.postgres.fleet_limits import IDLE_SECONDS, FleetLimits
from app.runs.postgres.jobs import asyncpg_dsn
from app.runs.postgres.worker import CaseWorker
from app.runs.storage.store import RunStore
from app.services.container import process_name
from app.settings import Settings
from tests.runs.builders import make_cases, make_new_run, make_record
from tests.runs.conftest import _open_postgres_store, postgres_url

pytestmark = pytest.mark.postgres


@pytest.fixture
async def pg_store() -> AsyncIterator[RunStore]:
    store = await _open_postgres_store()
    try:
        yield store
    finally:
        await store.aclose()


@pytest.fixture
def dsn(pg_store: RunStore) -> str:
    url = postgres_url()
    assert url is not None
    return asyncpg_dsn(url)


@pytest.fixture
async def two_holders(dsn: str) -> AsyncIterator[tuple[FleetLimits, FleetLimits]]:
    first, second = FleetLimits(dsn, "a", ttl_seconds=1), FleetLimits(dsn, "b", ttl_seconds=1)
    await first.start()
    await second.start()
    try:
        yield first, second
    finally:
        await first.aclose()
        await second.aclose()


class Stored:
    """Counts the cases a fake worker ran; ``gate`` holds them until released."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.ran: list[tuple[str, int]] = []
        self.started = asyncio.Event()
        self.gate = asyncio.Event()
        self.gate.set()

    async def run_case(self, run_id: str, seq: int) -> bool:
        self.ran.append((run_id, seq))
        self.started.set()
        await self.gate.wait()
        return await self.store.record_result(run_id, seq, make_record(f"case-{seq}"))


async def test_storing_a_run_queues_one_job_per_case(pg_store: RunStore) -> None:
    await pg_store.create_run(make_new_run(), make_cases(25))
    counts = await pg_store.count_by_status()
    assert counts["case_jobs"] == {"queued": 25, "picked": 0}


async def test_a_limit_holds_across_holders_and_a_429_halves_it_for_all(
    two_holders: tuple[FleetLimits, FleetLimits],
) -> None:
    first, second = two_holders
    limiters = [first.limiter("target:t:candidate", 3), second.limiter("target:t:candidate", 3)]
    in_flight, peak = 0, 0

    async def call(index: int) -> None:
        nonlocal in_flight, peak
        async with limiters[index % 2].slot():
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1

    await asyncio.gather(*(call(i) for i in range(40)))
    assert peak == 3
    limiters[0].record_rate_limited()
    await asyncio.sleep(0.1)
    async with limiters[1].slot():
        assert await second.try_acquire("target:t:candidate", 3) == []  # limit is now 1


async def test_a_process_reuses_a_slot_it_freed_and_gives_it_back_when_idle(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = two_holders
    asked = count_queries(first, monkeypatch)
    limiter = first.limiter("target:t:judge", 1)
    for _ in range(20):
        async with limiter.slot():
            await asyncio.sleep(0)
    assert asked == [1]  # one slot taken from the database for twenty calls in a row
    assert await second.try_acquire("target:t:judge", 1) == []  # still this process's
    await asyncio.sleep(IDLE_SECONDS + 0.15)
    assert await second.try_acquire("target:t:judge", 1) == [0]  # given back once idle


def count_queries(limits: FleetLimits, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``count`` of every slot query ``limits`` sends from now on, in order."""
    asked: list[int] = []
    try_acquire = limits.try_acquire

    async def counted(key: str, max_limit: int, count: int = 1) -> list[int]:
        asked.append(count)
        return await try_acquire(key, max_limit, count)

    monkeypatch.setattr(limits, "try_acquire", counted)
    return asked


async def test_calls_that_arrive_together_without_kept_slots_share_one_query(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = two_holders
    asked = count_queries(first, monkeypatch)
    limiter = first.limiter("run:start", 30)
    await asyncio.gather(*(_hold(limiter) for _ in range(30)))  # a run's first cases
    assert asked == [30]


async def test_a_slot_freed_here_goes_to_the_longest_waiting_call_without_a_query(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = two_holders
    asked = count_queries(first, monkeypatch)
    limiter = first.limiter("run:saturated", 2)
    served: list[int] = []

    async def call(index: int) -> None:
        async with limiter.slot():
            served.append(index)
            await asyncio.sleep(0.01)

    calls = [asyncio.create_task(call(index)) for index in range(12)]
    await asyncio.gather(*calls)
    assert served == list(range(12))
    assert len(asked) <= 3  # the first two slots, then a try or two while ten calls wait


async def test_a_slot_kept_by_one_process_goes_at_once_to_another_process_that_waits(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.runs.postgres.fleet_limits.IDLE_SECONDS", 30.0)
    first, second = two_holders
    kept, wanted = first.limiter("target:t:judge", 1), second.limiter("target:t:judge", 1)
    async with kept.slot():
        pass  # freed, and kept idle by the first process for its next call
    assert await second.try_acquire("target:t:judge", 1) == []
    async with asyncio.timeout(2):  # the waiter says it wants one; the first gives it back
        async with wanted.slot():
            waiting_first = asyncio.create_task(_hold(kept))
            await asyncio.sleep(0.3)
            assert not waiting_first.done()  # the second holds the only slot
    async with asyncio.timeout(2):  # and the first process's waiter gets it back in turn
        await waiting_first


async def test_a_process_that_took_every_slot_gives_back_all_but_its_share_to_one_that_waits(
    two_holders: tuple[FleetLimits, FleetLimits],
) -> None:
    first, second = two_holders
    limiters = [first.limiter("run:shared", 4), second.limiter("run:shared", 4)]
    in_flight = [0, 0]
    peak_second = 0
    stop = asyncio.Event()

    async def busy(index: int) -> None:  # a worker with more cases than slots
        nonlocal peak_second
        while not stop.is_set():
            async with limiters[index].slot():
                in_flight[index] += 1
                if index == 1:
                    peak_second = max(peak_second, in_flight[1])
                await asyncio.sleep(0.02)
                in_flight[index] -= 1

    first_calls = [asyncio.create_task(busy(0)) for _ in range(8)]
    await asyncio.sleep(0.2)
    assert in_flight[0] == 4  # the first process took every slot
    second_calls = [asyncio.create_task(busy(1)) for _ in range(8)]
    await asyncio.sleep(1.0)  # well within SHARE_SECONDS, the longest a slot stays otherwise
    stop.set()
    await asyncio.gather(*first_calls, *second_calls)
    assert peak_second == 2  # half of the limit, each


def count_releases(limits: FleetLimits, monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The slots of every query ``limits`` sends from now on to give slots back, in order."""
    given: list[list[int]] = []
    release = limits.release

    async def counted(key: str, slots: list[int]) -> None:
        given.append(list(slots))
        await release(key, slots)

    monkeypatch.setattr(limits, "release", counted)
    return given


async def _busy(limiter: Any, served: list[str], name: str, stop: asyncio.Event) -> None:
    """A worker with more cases than slots: 20 ms calls, one after another."""
    while not stop.is_set():
        async with limiter.slot():
            served.append(name)
            await asyncio.sleep(0.02)


async def test_processes_within_their_part_of_a_saturated_limit_keep_their_slots(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.runs.postgres.fleet_limits.SHARE_SECONDS", 0.2)
    first, second = two_holders
    given = [count_releases(first, monkeypatch), count_releases(second, monkeypatch)]
    limiters = [first.limiter("run:split", 4), second.limiter("run:split", 4)]
    served: list[str] = []
    stop = asyncio.Event()
    calls = [
        asyncio.create_task(_busy(limiters[index], served, name, stop))
        for index, name in enumerate("ab")
        for _ in range(6)
    ]
    await asyncio.sleep(1.0)  # the limit is split two and two
    for releases in given:
        releases.clear()
    settled = len(served)
    await asyncio.sleep(1.0)  # five times SHARE_SECONDS
    meanwhile = [list(releases) for releases in given]
    stop.set()
    await asyncio.gather(*calls)
    later = served[settled:]
    assert later.count("a") > 50
    assert later.count("b") > 50
    assert meanwhile == [[], []]  # no slot went round the database


async def test_processes_take_turns_when_the_limit_is_smaller_than_they_are(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.runs.postgres.fleet_limits.SHARE_SECONDS", 0.2)
    first, second = two_holders
    limiters = [first.limiter("run:one", 1), second.limiter("run:one", 1)]
    served: list[str] = []
    stop = asyncio.Event()
    calls = [
        asyncio.create_task(_busy(limiters[index], served, name, stop))
        for index, name in enumerate("ab")
        for _ in range(3)
    ]

    def turns() -> int:
        return sum(1 for before, after in itertools.pairwise(served) if before != after)

    # The only slot changes process every SHARE_SECONDS or so: 5-10 times in 2 s here, at
    # times as few as 3 on a loaded 2-core machine. Wait for four turns, for up to 10 s.
    for _ in range(100):
        if turns() >= 4:
            break
        await asyncio.sleep(0.1)
    stop.set()
    await asyncio.gather(*calls)
    assert turns() >= 4  # neither process keeps the slot while the other waits


async def test_slots_a_process_gives_back_at_once_go_in_one_query(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = two_holders
    given = count_releases(first, monkeypatch)
    limiters = [first.limiter("run:handover", 8), second.limiter("run:handover", 8)]
    gate = asyncio.Event()

    async def case(limiter: Any) -> None:
        async with limiter.slot():
            await gate.wait()

    first_cases = [asyncio.create_task(case(limiters[0])) for _ in range(8)]
    await asyncio.sleep(0.3)  # the first process holds every slot
    second_cases = [asyncio.create_task(case(limiters[1])) for _ in range(4)]
    await asyncio.sleep(0.3)  # and hears that the second waits
    gate.set()  # its eight cases end together, and their slots go back while another waits
    async with asyncio.timeout(2):
        await asyncio.gather(*first_cases, *second_cases)
    assert sorted(slot for slots in given for slot in slots) == list(range(8))
    assert len(given) <= 2  # one query, or two if the first was sent before the rest ended


async def test_a_limit_found_missing_by_many_calls_at_once_is_created_once(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = two_holders
    created: list[str] = []
    ensure = first.ensure

    async def counted(key: str, max_limit: int) -> None:
        created.append(key)
        await ensure(key, max_limit)

    monkeypatch.setattr(first, "ensure", counted)
    taken = await asyncio.gather(*(first.try_acquire("run:new", 8) for _ in range(8)))
    assert created == ["run:new"]
    assert sorted(slot for slots in taken for slot in slots) == list(range(8))


async def test_calls_that_found_a_limit_missing_just_before_its_creation_do_not_redo_it(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every call's first answer is "not known", but they arrive 0.1 s apart: the first call
    # creates the limit, and the later ones must find that creation instead of redoing it.
    first, _ = two_holders
    created: list[str] = []
    ensure = first.ensure

    async def counted(key: str, max_limit: int) -> None:
        created.append(key)
        await ensure(key, max_limit)

    class LateAnswers:
        def __init__(self, pool: Any) -> None:
            self.pool = pool
            self.asked = 0

        def __getattr__(self, name: str) -> Any:
            return getattr(self.pool, name)

        async def fetchrow(self, *args: Any) -> Any:
            self.asked += 1
            order = self.asked
            row = await self.pool.fetchrow(*args)
            if order <= 8:
                await asyncio.sleep(0.1 * order)
            return row

    monkeypatch.setattr(first, "ensure", counted)
    monkeypatch.setattr(first, "_pool", LateAnswers(first._pool))
    taken = await asyncio.gather(*(first.try_acquire("run:late", 8) for _ in range(8)))
    assert created == ["run:late"]
    assert sorted(slot for slots in taken for slot in slots) == list(range(8))


async def test_a_429_seen_by_one_process_lowers_the_limit_of_the_slots_another_keeps(
    two_holders: tuple[FleetLimits, FleetLimits],
) -> None:
    first, second = two_holders
    seeing, keeping = first.limiter("target:t:judge", 3), second.limiter("target:t:judge", 3)
    in_flight, peak = 0, 0

    async def call() -> None:
        nonlocal in_flight, peak
        async with keeping.slot():
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.05)
            in_flight -= 1

    await asyncio.gather(call(), call(), call())
    assert peak == 3  # three slots, now kept idle by the second process
    seeing.record_rate_limited()
    await asyncio.sleep(0.3)  # the NOTIFY of the lowered limit reaches the second process
    assert keeping.limit == 1
    peak = 0
    await asyncio.gather(call(), call(), call())
    assert peak == 1  # its kept slots 1 and 2 went back, not into use


async def _hold(limiter: Any) -> None:
    async with limiter.slot():
        pass


async def test_the_slots_of_a_holder_that_died_come_back_after_its_ttl(
    two_holders: tuple[FleetLimits, FleetLimits],
) -> None:
    first, second = two_holders
    await first.ensure("run:x", 1)
    assert await first.try_acquire("run:x", 1) == [0]
    await first.aclose()  # "a" stops renewing without freeing, as a killed process would
    assert await second.try_acquire("run:x", 1) == []
    await asyncio.sleep(1.2)
    assert await second.try_acquire("run:x", 1) == [0]


async def test_processes_given_one_instance_id_hold_slots_and_claims_of_their_own(
    dsn: str,
) -> None:
    settings = Settings(instance_id="eval")  # two replicas deployed with one EVAL_INSTANCE_ID
    names = sorted({process_name(settings), process_name(settings)})
    assert len(names) == 2
    assert all(name.startswith("eval-") for name in names)
    first, second = (FleetLimits(dsn, name, ttl_seconds=5) for name in names)
    await first.start()
    await second.start()
    try:
        await first.ensure("run:y", 1)
        assert await first.try_acquire("run:y", 1) == [0]
        await second.release("run:y", [0])  # not the second's slot: it stays the first's
        assert await second.try_acquire("run:y", 1) == []
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_worker_runs_each_case_once_and_the_run_is_finished(
    pg_store: RunStore, dsn: str
) -> None:
    stored = Stored(pg_store)
    worker = CaseWorker(stored.run_case, dsn=dsn, name="w", max_cases=20,
                        claim_timeout_seconds=2, observer=_Quiet())  # fmt: skip
    limits = FleetLimits(dsn, "w", ttl_seconds=2)
    await limits.start()
    runs = FleetRuns(pg_store, _NoExecutor(), limits)  # type: ignore[arg-type]
    runs.worker = worker
    await runs.start()
    run, _ = await pg_store.create_run(make_new_run(), make_cases(30))
    try:
        await _wait_for_status(pg_store, run.id, "completed")
    finally:
        await runs.aclose()
        await limits.aclose()
    assert sorted(seq for _, seq in stored.ran) == list(range(30))


@asynccontextmanager
async def _one_worker(
    store: RunStore, dsn: str, stored: Stored, observer: Any = None
) -> AsyncIterator[FleetRuns]:
    """Runs on ``store`` with one worker running ``stored.run_case`` (not started yet)."""
    worker = CaseWorker(stored.run_case, dsn=dsn, name="w", max_cases=20,
                        claim_timeout_seconds=2, observer=observer or _Quiet())  # fmt: skip
    limits = FleetLimits(dsn, "w", ttl_seconds=2)
    await limits.start()
    runs = FleetRuns(store, _NoExecutor(), limits)  # type: ignore[arg-type]
    runs.worker = worker
    try:
        yield runs
    finally:
        await runs.aclose()
        await limits.aclose()


async def test_a_case_run_again_after_it_was_stored_is_counted_skipped_not_stored(
    pg_store: RunStore, dsn: str
) -> None:
    """A claim handed to another worker (the first one starved past the claim timeout) runs
    the case twice: it is stored once, and only the worker that stored it counts it stored
    (before, both did: 2030-2114 stored of 2000 under load)."""
    stored, outcomes = Stored(pg_store), _Outcomes()
    run, _ = await pg_store.create_run(make_new_run(), make_cases(5))
    for seq in (0, 1):  # stored by "another worker" while their jobs are still queued
        assert await pg_store.record_result(run.id, seq, make_record(f"case-{seq}"))
    async with _one_worker(pg_store, dsn, stored, outcomes) as runs:
        await runs.start()
        await _wait_for_status(pg_store, run.id, "completed")
    assert sorted(seq for _, seq in stored.ran) == list(range(5))  # all ran here
    assert sorted(outcomes.finished) == ["skipped"] * 2 + ["stored"] * 3
    assert (await pg_store.get_run(run.id)).done == 5
    async with pg_store.engine.connect() as connection:
        count = await connection.exec_driver_sql(
            "SELECT count(*) FROM results WHERE run_id = $1", (run.id,)
        )
        assert count.scalar_one() == 5


async def test_cancel_deletes_the_runs_jobs_and_stops_those_running(
    pg_store: RunStore, dsn: str
) -> None:
    stored = Stored(pg_store)
    stored.gate.clear()  # cases hang until cancelled
    worker = CaseWorker(stored.run_case, dsn=dsn, name="w", max_cases=20,
                        claim_timeout_seconds=2, observer=_Quiet())  # fmt: skip
    limits = FleetLimits(dsn, "w", ttl_seconds=2)
    await limits.start()
    runs = FleetRuns(pg_store, _NoExecutor(), limits)  # type: ignore[arg-type]
    runs.worker = worker
    await runs.start()
    run, _ = await pg_store.create_run(make_new_run(), make_cases(100))
    try:
        async with asyncio.timeout(10):
            await stored.started.wait()
        cancelled = await runs.cancel(run.id)
        started = len(stored.ran)
        await asyncio.sleep(0.5)
        counts = await pg_store.count_by_status()
    finally:
        await runs.aclose()
        await limits.aclose()
    assert cancelled.status == "cancelled"
    assert counts["case_jobs"] == {"queued": 0, "picked": 0}
    assert len(stored.ran) == started < 100
    assert (await pg_store.get_run(run.id)).done == 0  # the running ones were stopped


async def test_cancel_on_a_locked_run_row_answers_stops_its_cases_and_is_written_later(
    pg_store: RunStore, dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the cancel waited for the lock as long as it was held (issue 34)."""
    monkeypatch.setattr(fleet, "CANCEL_WAIT_SECONDS", 0.5)
    stored = Stored(pg_store)
    stored.gate.clear()  # cases hang until cancelled
    holder = await asyncpg.connect(dsn)
    try:
        async with _one_worker(pg_store, dsn, stored) as runs:
            await runs.start()
            run, _ = await pg_store.create_run(make_new_run(), make_cases(100))
            async with asyncio.timeout(10):
                await stored.started.wait()
            locked = holder.transaction()
            await locked.start()
            await holder.execute("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", run.id)
            async with asyncio.timeout(5):  # before: as long as the lock is held
                answered = await runs.cancel(run.id)
            started = len(stored.ran)
            await asyncio.sleep(0.5)
            counts = await pg_store.count_by_status()
            assert not answered.finished  # not written yet
            assert counts["case_jobs"] == {"queued": 0, "picked": 0}  # but honoured
            assert len(stored.ran) == started < 100
            await locked.rollback()
            await _wait_for_status(pg_store, run.id, "cancelled")  # written once it can be
    finally:
        await holder.close()
    assert (await pg_store.get_run(run.id)).done == 0


async def test_reconcile_requeues_lost_cases_and_finishes_runs_left_unfinished(
    pg_store: RunStore, dsn: str
) -> None:
    limits = FleetLimits(dsn, "r", ttl_seconds=2)
    await limits.start()
    runs = FleetRuns(pg_store, _NoExecutor(), limits)  # type: ignore[arg-type]
    lost, _ = await pg_store.create_run(make_new_run(), make_cases(5))
    done, _ = await pg_store.create_run(make_new_run(), make_cases(2))
    await pg_store.record_result(lost.id, 0, make_record("case-0"))
    for seq in range(2):
        await pg_store.record_result(done.id, seq, make_record(f"case-{seq}"))
    await _drop_jobs(pg_store)  # as if a crash lost them
    try:
        await runs.reconcile()
    finally:
        await limits.aclose()
    assert (await pg_store.get_run(done.id)).status == "completed"
    assert (await pg_store.count_by_status())["case_jobs"]["queued"] == 4


async def test_a_retried_run_queues_its_failed_cases_again(pg_store: RunStore) -> None:
    run, _ = await pg_store.create_run(make_new_run(), make_cases(3))
    await pg_store.record_result(run.id, 0, make_record("case-0"))
    await pg_store.record_result(run.id, 1, make_record("case-1", status="error", score=None))
    await pg_store.record_result(run.id, 2, make_record("case-2"))
    await pg_store.finish_run(run.id, "completed", {})
    await _drop_jobs(pg_store)
    assert await pg_store.reopen_for_retry(run.id) == 1
    assert (await pg_store.count_by_status())["case_jobs"]["queued"] == 1


async def _drop_jobs(store: RunStore) -> None:
    async with store.engine.begin() as connection:
        await connection.exec_driver_sql("DELETE FROM pgqueuer")


async def _wait_for_status(store: RunStore, run_id: str, status: str) -> None:
    async with asyncio.timeout(20):
        while (await store.get_run(run_id)).status != status:  # noqa: ASYNC110 - polls a database
            await asyncio.sleep(0.05)


class _Quiet:
    def record_case_claimed(self, worker: str) -> None:
        pass

    def record_case_finished(self, worker: str, outcome: str) -> None:
        pass


class _Outcomes(_Quiet):
    def __init__(self) -> None:
        self.finished: list[str] = []

    def record_case_finished(self, worker: str, outcome: str) -> None:
        self.finished.append(outcome)


class _NoExecutor:
    def forget(self, run_id: str) -> None:
        pass

    async def settle_comparisons(self, run_id: str) -> None:
        pass

    async def run_case(self, run_id: str, seq: int) -> Any:
        raise AssertionError("the worker calls Stored.run_case directly")

    async def aclose(self) -> None:
        pass


async def test_a_slot_that_could_not_be_given_back_is_given_back_once_the_database_answers(
    two_holders: tuple[FleetLimits, FleetLimits], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = two_holders
    release = first.release
    failures = [ConnectionRefusedError("the database restarts")]

    async def flaky(key: str, slots: list[int]) -> None:
        if failures:
            raise failures.pop()
        await release(key, slots)

    monkeypatch.setattr(first, "release", flaky)
    monkeypatch.setattr("app.runs.postgres.fleet_limits.IDLE_SECONDS", 0.0)
    limiter = first.limiter("run:restarting", 1)
    with pytest.raises(ConnectionRefusedError):
        async with limiter.slot():
            limiter.wanted_elsewhere("b")  # so the slot goes back when freed
    # Renewed by its holder every third of a second, it would stay taken for good.
    async with asyncio.timeout(5):
        while await second.try_acquire("run:restarting", 1) != [0]:  # noqa: ASYNC110 (a row)
            await asyncio.sleep(0.05)
