"""Executing a run's cases: a small interface and the executor behind both modes.

Running one case is a function of (run id, case number) that reads the case and writes its
result only through the store. The embedded default (``execute_run``) feeds a pool of
asyncio workers from the database; with PostgreSQL, the task queue's workers call
``run_case`` for each job they claim (``app.runs.postgres.worker``). Cases asked for at the same
moment are read in one query (``CaseLoader``) and results are written in batches by the
store, so a case costs no query of its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, aclosing, nullcontext
from typing import Any, Protocol

from app.errors import RunNotFound
from app.evaluation.budget import Spending
from app.evaluation.known_answers import known_answer
from app.evaluation.orchestrator import not_run
from app.evaluation.prepared import PreparedRun
from app.evaluation.records import ResultRecord
from app.evaluation.select_best import pending, settle_test
from app.evaluation.workspaces import run_after_all
from app.observability.logging import bind_log_context
from app.runs.models import StoredCase
from app.runs.sequence import in_sequence, wait_for_earlier
from app.runs.spec import stored_case
from app.runs.storage.store import RunStore
from app.runs.storage.store_base import utc_now

logger = logging.getLogger("app.runs.executor")
PENDING_BATCH = 100
LOAD_BATCH = 200
PREPARED_RUNS_KEPT = 64
SPENDING_REFRESH_SECONDS = 1.0
"""How old a run's spending read from the store may be before a case reads it again."""


RunPreparer = Callable[[dict[str, Any]], Awaitable[PreparedRun]]
"""Builds a run's ``PreparedRun`` from its stored spec (``runs.spec.prepare_stored_run``)."""

RunSlots = Callable[[str, int], AbstractAsyncContextManager[None]]
"""``(run id, max_concurrency)`` -> a slot of the run's fleet-wide concurrency limit."""


class CaseLoader:
    """Reads cases asked for at the same moment in one query (``RunStore.load_cases``)."""

    def __init__(self, store: RunStore) -> None:
        self._store = store
        self._waiting: dict[tuple[str, int], list[asyncio.Future[StoredCase]]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def load(self, run_id: str, seq: int) -> StoredCase:
        """The stored case; raises ``RunNotFound`` when the run has no such case."""
        future: asyncio.Future[StoredCase] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault((run_id, seq), []).append(future)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read(), name="runs-case-reader")
        return await future

    async def _read(self) -> None:
        await asyncio.sleep(0)  # let the other cases claimed in this tick join the query
        while self._waiting:
            keys = list(self._waiting)[:LOAD_BATCH]
            batch = {key: self._waiting.pop(key) for key in keys}
            try:
                found = {(c.run_id, c.seq): c for c in await self._store.load_cases(keys)}
            except Exception as exc:
                for futures in batch.values():
                    _settle(futures, exception=exc)
                continue
            for (run_id, seq), futures in batch.items():
                case = found.get((run_id, seq))
                missing = RunNotFound(f"run {run_id!r} has no case number {seq}")
                _settle(futures, case, exception=None if case else missing)

    async def aclose(self) -> None:
        """Wait for a read under way (its callers may have been cancelled meanwhile)."""
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)


def _settle(
    futures: list[asyncio.Future[StoredCase]],
    case: StoredCase | None = None,
    *,
    exception: BaseException | None = None,
) -> None:
    for future in futures:
        if future.done():
            continue
        if exception is not None:
            future.set_exception(exception)
        elif case is not None:
            future.set_result(case)


class CaseExecutor(Protocol):
    """Runs the pending cases of runs."""

    async def execute_run(self, run_id: str) -> None:
        """Run every pending case of the run; returns when none is left."""
        ...

    async def run_case(self, run_id: str, seq: int) -> bool:
        """Run one case and store its result; whether this stored it (not stored before)."""
        ...

    async def aclose(self) -> None:
        """Wait for work left running by cancelled cases."""
        ...


def _in_order(case: StoredCase, run: PreparedRun) -> bool:
    """Whether the case reads the cases before it (``app.runs.sequence``)."""
    return stored_case(case.definition, run.for_arm(case.arm)).case.sequence is not None


def failure_record(prepared: PreparedRun, case: StoredCase, message: str) -> ResultRecord:
    """The record of a case whose evaluation failed unexpectedly."""
    return ResultRecord(
        eval_id=case.eval_id,
        dataset=prepared.plan.dataset,
        status="error",
        score=None,
        verdict=None,
        target=prepared.plan.target,
        arm=prepared.plan.arm,
        timestamp=utc_now(),
        error=message,
    )


class InProcessExecutor:
    """Runs cases as asyncio tasks in this process, at most ``max_concurrency`` at once.

    Cases are fed to a fixed pool of workers from the database in small batches, so a run
    of any size holds only the cases in flight.
    """

    def __init__(
        self, store: RunStore, prepare: RunPreparer, *, run_slots: RunSlots | None = None
    ) -> None:
        self._store = store
        self._prepare = prepare
        self._run_slots = run_slots
        self._prepared: dict[str, asyncio.Future[PreparedRun]] = {}
        self._spending: dict[tuple[str, int | None], tuple[Spending, float]] = {}
        self._loader = CaseLoader(store)

    async def _prepared_run(self, run_id: str) -> PreparedRun:
        """The run's ``PreparedRun``, built once however many cases ask at the same time."""
        prepared = self._prepared.get(run_id)
        if prepared is None or (prepared.done() and prepared.exception() is not None):
            prepared = asyncio.ensure_future(self._prepare_once(run_id))
            self._prepared[run_id] = prepared
            if len(self._prepared) > PREPARED_RUNS_KEPT:  # runs other workers finished
                self._prepared.pop(next(iter(self._prepared)))
        return await asyncio.shield(prepared)

    async def _prepare_once(self, run_id: str) -> PreparedRun:
        prepared = await self._prepare(await self._store.load_spec(run_id))
        if self._run_slots is not None:
            await self._store.mark_running(run_id)  # a worker's first case of the run
        return prepared

    def forget(self, run_id: str) -> None:
        """Drop what is kept of a finished run."""
        self._prepared.pop(run_id, None)
        for key in [key for key in self._spending if key[0] == run_id]:
            self._spending.pop(key)

    async def _spending_of(self, run_id: str, arm: int | None, limit: float) -> Spending:
        """What the run (or its arm: each arm has the budget) has spent, as far as known here.

        Its stored results' cost, read again every ``SPENDING_REFRESH_SECONDS`` (other
        processes store results too), plus what this process finished since.
        """
        kept = self._spending.get((run_id, arm))
        now = time.monotonic()
        if kept is not None and now - kept[1] < SPENDING_REFRESH_SECONDS:
            return kept[0]
        spending = Spending(limit, await self._store.run_spending(run_id, arm))
        self._spending[run_id, arm] = (spending, now)
        if len(self._spending) > PREPARED_RUNS_KEPT:  # runs other workers finished
            self._spending.pop(next(iter(self._spending)))
        return spending

    async def aclose(self) -> None:
        """Wait for the reads its cancelled callers left running (before the store closes).

        Preparing a run and reading cases are shared by many cases, so cancelling one case
        does not stop them; they hold a database connection until they end.
        """
        await asyncio.gather(*self._prepared.values(), return_exceptions=True)
        await self._loader.aclose()

    async def execute_run(self, run_id: str) -> None:
        """Run every pending case of the run with a bounded pool of workers."""
        prepared = await self._prepared_run(run_id)
        concurrency = prepared.plan.max_concurrency
        queue: asyncio.Queue[StoredCase | None] = asyncio.Queue(maxsize=concurrency)
        workers = max(1, concurrency)
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._feed(run_id, queue, workers))
                for _ in range(workers):
                    group.create_task(self._work(run_id, queue))
            await self._store.wait_for_writes()
            if not await self._store.cancel_requested(run_id):
                await self.settle_comparisons(run_id)
                await self._after_all(run_id, prepared)
        finally:
            self._prepared.pop(run_id, None)

    async def _after_all(self, run_id: str, prepared: PreparedRun) -> None:
        """The suite's ``afterAll`` extensions, with every stored record of the run."""
        if prepared.plan.workspace is None or not prepared.plan.workspace.at("after_all"):
            return
        records = [
            ResultRecord.model_validate_json(text)
            async for _, text in self._store.iter_numbered_results(run_id)
        ]
        await run_after_all(prepared.plan.workspace, prepared.context.programs, records)

    async def settle_comparisons(self, run_id: str) -> None:
        """Settle the run's select-best graders once every (case, arm) has its record.

        Idempotent: a record settled before (a run killed while settling, then resumed) is
        left as it is, so each test's comparison is asked for once it is unsettled.
        """
        prepared = await self._prepared_run(run_id)
        if not prepared.plan.compares_arms:
            return
        by_test: dict[str, list[tuple[int, ResultRecord]]] = {}
        async for seq, text in self._store.iter_numbered_results(run_id):
            record = ResultRecord.model_validate_json(text)
            by_test.setdefault(record.eval_id, []).append((seq, record))
        for group in by_test.values():
            if not any(pending(record) for _, record in group):
                continue
            stored = await self._store.load_case(run_id, group[0][0])
            case = stored_case(stored.definition, prepared).case
            settled = await settle_test(prepared, [record for _, record in group], case)
            for (seq, before), after in zip(group, settled, strict=True):
                if after is not before:
                    await self._store.replace_result(run_id, seq, after)

    async def _pending(self, run_id: str) -> AsyncGenerator[StoredCase, None]:
        """The run's pending cases, in order, until a cancel is requested.

        The next batch is read while this one is handed out: a read waits for the busy loop
        at each of its round trips to the database thread, and workers must not wait for it.
        """
        upcoming = asyncio.ensure_future(self._pending_batch(run_id, after=-1))
        try:
            while (cases := await upcoming) is not None:
                if len(cases) == PENDING_BATCH:
                    upcoming = asyncio.ensure_future(
                        self._pending_batch(run_id, after=cases[-1].seq)
                    )
                for case in cases:
                    yield case
                if len(cases) < PENDING_BATCH:
                    return
        finally:  # a read under way ends on its own (it holds a database connection)
            await asyncio.gather(upcoming, return_exceptions=True)

    async def _pending_batch(self, run_id: str, *, after: int) -> list[StoredCase] | None:
        """The next pending cases after position ``after``; None once a cancel is requested."""
        if await self._store.cancel_requested(run_id):
            return None
        return await self._store.pending_cases(run_id, after=after, limit=PENDING_BATCH)

    async def _feed(
        self, run_id: str, queue: asyncio.Queue[StoredCase | None], workers: int
    ) -> None:
        async with aclosing(self._pending(run_id)) as cases:
            async for case in cases:
                await queue.put(case)
        for _ in range(workers):
            await queue.put(None)

    async def _work(self, run_id: str, queue: asyncio.Queue[StoredCase | None]) -> None:
        # The feeder reads cases in batches and the writer commits records in batches, so a
        # worker needs no query of its own per case and never waits for a commit.
        while (case := await queue.get()) is not None:
            await self._run_stored(run_id, case, wait_for_commit=False)

    async def run_case(self, run_id: str, seq: int) -> bool:
        """Load the case, evaluate it and store its record (a job of the task queue).

        With fleet-wide run limits, the case first waits for a slot of its run's limit. A
        case whose record is stored already (its job ran before, but the worker lost its
        connection or its claim before it could say so) is not run again; one run twice at
        once (a claim handed to another worker while its first worker was starved of CPU)
        is stored once. Returns whether this call stored it.
        """
        prepared = await self._prepared_run(run_id)
        case = await self._loader.load(run_id, seq)
        if not case.pending:
            return False
        slots = self._run_slots
        limit = prepared.plan.max_concurrency
        if slots is not None and _in_order(case, prepared):
            await wait_for_earlier(self._store, run_id, seq)  # before it takes a slot
        async with slots(run_id, limit) if slots is not None else nullcontext():
            return await self._run_stored(run_id, case)

    async def _run_stored(
        self, run_id: str, case: StoredCase, *, wait_for_commit: bool = True
    ) -> bool:
        whole = await self._prepared_run(run_id)
        prepared = whole.for_arm(case.arm)
        with bind_log_context(run_id=run_id, case_id=case.eval_id):
            try:
                formatted = stored_case(case.definition, prepared)
                if formatted.case.sequence is not None:  # it reads the cases before it
                    formatted = await in_sequence(self._store, run_id, case, whole, formatted)
                known = None
                if case.candidate_answer is not None:
                    known = known_answer(case.candidate_answer, case.candidate_output)
                budget = prepared.plan.budget_usd
                spending = (
                    None if budget is None else await self._spending_of(run_id, case.arm, budget)
                )
                if spending is not None and spending.exhausted():
                    record = not_run(formatted.case, prepared.plan, spending.refusal())
                else:
                    record = await prepared.evaluate(formatted, known=known)
                    if spending is not None:
                        spending.add(record)
            except Exception as exc:
                # A defect, not a case failure (those come back as records): keep the run going.
                logger.exception("case %s of run %s failed unexpectedly", case.eval_id, run_id)
                record = failure_record(prepared, case, f"internal error: {type(exc).__name__}")
            if not wait_for_commit:
                await self._store.hand_over_result(run_id, case.seq, record)
                return True
            if not await self._store.record_result(run_id, case.seq, record):
                logger.warning("case %s of run %s was already stored", case.eval_id, run_id)
                return False
            return True
