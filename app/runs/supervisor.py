"""``RunSupervisor``: owns the background tasks that execute runs in this process (embedded).

The embedded default (SQLite, one process). Created in the lifespan. On start it resumes
runs left ``queued`` or ``running`` (a crash or a deploy); on shutdown it stops starting
cases, cancels those in flight and leaves the runs ``running`` in the database, so the next
start resumes them without repeating finished cases. Cancelling a run stops it for good and
marks it ``cancelled``. With PostgreSQL, ``app.runs.postgres.fleet.FleetRuns`` plays this part and
the task queue's workers execute the cases.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from sqlalchemy.exc import OperationalError

from app.observability.logging import bind_log_context
from app.runs.executor import CaseExecutor
from app.runs.models import RunInfo
from app.runs.storage.store import RunStore
from app.runs.summary import summary_document

logger = logging.getLogger("app.runs.supervisor")
CANCEL_WAIT_SECONDS = 5.0
"""Longest a cancel request waits for the database before answering (the run is stopped
here at once either way, and the cancellation written once the database takes it)."""
CANCEL_RETRY_SECONDS = 1.0


def _busy(error: BaseException | None) -> bool:
    """Whether ``error`` is SQLite's ``database is locked`` (another writer holds it)."""
    return isinstance(error, OperationalError) and "locked" in str(error)


class RunScheduler(Protocol):
    """What the runs service asks of the part that executes runs (embedded or fleet)."""

    async def start(self) -> None:
        """Begin executing stored runs."""
        ...

    def submit(self, run_id: str) -> None:
        """A run was stored (or reopened): execute it."""
        ...

    async def cancel(self, run_id: str) -> RunInfo:
        """Stop a run for good; finished results are kept."""
        ...

    async def aclose(self) -> None:
        """Stop executing; unfinished runs stay resumable."""
        ...


class RunSupervisor:
    """Starts, resumes, cancels and finishes runs; at most ``max_active_runs`` at once."""

    def __init__(self, store: RunStore, executor: CaseExecutor, *, max_active_runs: int) -> None:
        self._store = store
        self._executor = executor
        self._slots = asyncio.Semaphore(max_active_runs)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._recording: dict[str, asyncio.Task[None]] = {}
        self._closing = False

    async def start(self) -> None:
        """Resume every run left queued or running (one process owns the database)."""
        for run_id in await self._store.active_run_ids():
            logger.info("resuming run %s", run_id)
            self.submit(run_id)

    def submit(self, run_id: str) -> None:
        """Start executing a stored, queued (or interrupted) run in the background.

        A run whose previous task is still winding down (a retry right after it finished)
        starts once that task is done.
        """
        if self._closing:
            return
        previous = self._tasks.get(run_id)
        task = asyncio.create_task(self._drive(run_id, previous), name=f"run-{run_id}")
        self._tasks[run_id] = task
        task.add_done_callback(lambda done: self._forget(run_id, done))

    def _forget(self, run_id: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(run_id) is task:
            del self._tasks[run_id]

    def is_running_here(self, run_id: str) -> bool:
        """Whether this process has a task for the run."""
        return run_id in self._tasks

    async def _drive(self, run_id: str, previous: asyncio.Task[None] | None) -> None:
        bind_log_context(run_id=run_id)
        if previous is not None:
            await asyncio.wait({previous})
        async with self._slots:
            if (await self._store.get_run(run_id)).finished:
                return
            await self._store.mark_running(run_id)
            try:
                await self._executor.execute_run(run_id)
            except Exception as exc:
                logger.exception("run %s failed", run_id)
                await self.finish(run_id, "failed", error=f"{type(exc).__name__}: {exc}")
                return
            cancelled = await self._store.cancel_requested(run_id)
            await self.finish(run_id, "cancelled" if cancelled else "completed")

    async def finish(self, run_id: str, status: str, *, error: str | None = None) -> None:
        """Give the run its final status and the summary of its stored results."""
        await self._store.wait_for_writes()
        facts = await self._store.result_facts(run_id)
        summary = await summary_document(facts, await self._store.load_spec(run_id))
        await self._store.finish_run(run_id, status, summary, error=error)

    async def cancel(self, run_id: str) -> RunInfo:
        """Stop a run: no new case starts, in-flight ones are cancelled, results are kept.

        On a busy database (a long write holds it past ``CANCEL_WAIT_SECONDS``) the run is
        stopped here at once and its cancellation is written as soon as the database lets
        it: the answer is the run as stored then, never an error. The write is not
        interrupted (its rollback would wait for the database too): it goes on in a task.
        """
        attempt = asyncio.create_task(self._store.request_cancel(run_id))
        done, _ = await asyncio.wait({attempt}, timeout=CANCEL_WAIT_SECONDS)
        if done and not _busy(attempt.exception()):
            run = attempt.result()
            if run.finished:
                return run
            await self._stop(run_id)
            await self.finish(run_id, "cancelled")
            return await self._store.get_run(run_id)
        logger.warning("run %s: database busy; cancelled here, written when it can be", run_id)
        task = self._tasks.get(run_id)
        if task is not None:
            task.cancel()  # not awaited: winding down may wait for the database too
        if run_id not in self._recording:
            recording = asyncio.create_task(self._record_cancel(run_id, attempt))
            self._recording[run_id] = recording
            recording.add_done_callback(lambda _: self._recording.pop(run_id, None))
        return await self._store.get_run(run_id)

    async def _stop(self, run_id: str) -> None:
        task = self._tasks.get(run_id)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _record_cancel(self, run_id: str, attempt: asyncio.Task[RunInfo]) -> None:
        """Write a cancellation the database was too busy to take, retrying until it does."""
        await self._stop(run_id)
        while True:
            try:
                run = await attempt
            except OperationalError as exc:
                if not _busy(exc):
                    raise
                await asyncio.sleep(CANCEL_RETRY_SECONDS)
                attempt = asyncio.create_task(self._store.request_cancel(run_id))
                continue
            if not run.finished:
                await self.finish(run_id, "cancelled")
            return

    async def aclose(self) -> None:
        """Stop starting cases, cancel in-flight ones and wait; runs stay resumable."""
        self._closing = True
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        recording = list(self._recording.values())  # cancellations not written yet: a last
        if recording:  # chance, or the runs would resume at the next start
            _, pending = await asyncio.wait(recording, timeout=CANCEL_WAIT_SECONDS)
            for task in pending:
                task.cancel()
            await asyncio.gather(*recording, return_exceptions=True)
        await self._executor.aclose()
