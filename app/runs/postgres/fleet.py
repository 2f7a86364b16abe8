"""``FleetRuns``: runs on PostgreSQL, executed by every worker sharing the database.

The counterpart of ``RunSupervisor`` when cases are jobs of the task queue. Storing a run
queues its cases (``app.runs.postgres.jobs``), so submitting needs nothing more; any worker of the
fleet (API processes and ``eval-worker`` processes alike) claims them. The worker whose
commit stores a run's last case finishes it. Cancelling deletes the run's jobs and stops
the ones running, everywhere at once. Every ``reconcile_seconds`` a sweep finishes runs
whose last worker died before finishing them, and queues again the cases of runs left with
no job (jobs lost to a crash between two statements, runs of an older version); while the
sweep fails (the database away) it tries again with backoff and the link ``runs_sweep`` is
down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

import asyncpg
from sqlalchemy.exc import SQLAlchemyError

from app.errors import RunNotFound
from app.observability.links import Backoff, Links
from app.runs.executor import InProcessExecutor
from app.runs.models import RunInfo
from app.runs.postgres.fleet_limits import FleetLimits
from app.runs.postgres.worker import CaseWorker
from app.runs.storage.store import RunStore
from app.runs.summary import summary_document

logger = logging.getLogger("app.runs.postgres.fleet")
DATABASE_ERRORS = (
    SQLAlchemyError,
    OSError,  # TimeoutError and refused connections too
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.InternalClientError,  # a pooled connection cut mid-query
)
"""What the store and the fleet limits raise when the database fails, not the run."""
SWEEP_LINK = "runs_sweep"
CANCEL_WAIT_SECONDS = 5.0
"""Longest a cancel request waits for the database before answering (see ``cancel``)."""
CANCEL_RETRY_SECONDS = 5.0
"""Longest wait between two attempts to write a cancellation the database refused."""


def run_limit_key(run_id: str) -> str:
    """The fleet-wide limit of a run's cases in flight."""
    return f"run:{run_id}"


class FleetRuns:
    """Finishes, cancels and reconciles runs whose cases the task queue's workers execute."""

    def __init__(
        self,
        store: RunStore,
        executor: InProcessExecutor,
        limits: FleetLimits,
        *,
        reconcile_seconds: float = 10.0,
        links: Links | None = None,
    ) -> None:
        self._store = store
        self._executor = executor
        self._limits = limits
        self.worker: CaseWorker | None = None
        """This process's worker of the queue (None: an API process that runs no case)."""
        self._reconcile_seconds = reconcile_seconds
        self._links = links or Links()
        self._sweeper: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._cancelling: set[str] = set()
        """Runs whose cancellation is not written yet (the sweep leaves them alone)."""

    async def start(self) -> None:
        """Finish runs as their last case is stored; start the worker and the sweep."""
        self._store.on_run_complete = self._completed
        if self.worker is not None:
            await self.worker.start()
        self._sweeper = asyncio.create_task(self._sweep(), name="runs-reconcile")

    def submit(self, run_id: str) -> None:
        """Nothing to do: storing (or reopening) the run queued its cases."""

    async def run_case(self, run_id: str, seq: int) -> bool:
        """Run one claimed case; whether this stored it (``InProcessExecutor.run_case``).

        A run that cannot run at all is finished as ``failed``.
        """
        try:
            return await self._executor.run_case(run_id, seq)
        except RunNotFound:
            return False  # deleted meanwhile
        except DATABASE_ERRORS:
            raise  # the database (away, restarting): the job is tried again
        except Exception as exc:
            # Preparing the run failed (its target was removed...): no case of it can run.
            logger.exception("run %s cannot run", run_id)
            await self._store.request_cancel(run_id)
            await self.finish(run_id, "failed", error=f"{type(exc).__name__}: {exc}")
            return False

    def _completed(self, run_id: str) -> None:
        self._spawn(self.finish(run_id, "completed"))

    async def finish(self, run_id: str, status: str, *, error: str | None = None) -> None:
        """Give the run its final status and summary (once, whoever asks first)."""
        await self._store.wait_for_writes()
        if status == "completed":
            await self._executor.settle_comparisons(run_id)
        facts = await self._store.result_facts(run_id)
        summary = await summary_document(facts, await self._store.load_spec(run_id))
        await self._store.finish_run(run_id, status, summary, error=error)
        self._executor.forget(run_id)
        await self._limits.drop(run_limit_key(run_id))

    async def cancel(self, run_id: str) -> RunInfo:
        """Stop a run everywhere: its jobs are deleted and the running ones stopped.

        On a busy database (the run's row locked by a long transaction, or the database
        slow to answer) the answer comes within ``CANCEL_WAIT_SECONDS``, never an error: the
        run's jobs are deleted at once (their table does not wait for the run's row), so no
        case of it starts anywhere, and its cancellation is written as soon as the database
        takes it (tried again with backoff while the database fails). Until then this
        process's sweep leaves the run alone, so its cases are not queued again.
        """
        attempt = asyncio.create_task(self._store.request_cancel(run_id))
        done, _ = await asyncio.wait({attempt}, timeout=CANCEL_WAIT_SECONDS)
        error = attempt.exception() if done else None
        if done and error is None:
            run = attempt.result()
            if not run.finished:
                await self.finish(run_id, "cancelled")
            return await self._store.get_run(run_id)
        if error is not None and not isinstance(error, DATABASE_ERRORS):
            raise error
        logger.warning("run %s: database busy; jobs dropped, cancel written when it can be", run_id)
        if run_id not in self._cancelling:
            self._cancelling.add(run_id)
            self._spawn(self._record_cancel(run_id, attempt))
        else:  # the first cancel's task writes it; this attempt may end as it will
            attempt.add_done_callback(lambda done: done.cancelled() or done.exception())
        with contextlib.suppress(*DATABASE_ERRORS, TimeoutError):
            async with asyncio.timeout(CANCEL_WAIT_SECONDS):
                await self._store.drop_run_jobs(run_id)
        return await self._store.get_run(run_id)

    async def _record_cancel(self, run_id: str, attempt: asyncio.Task[RunInfo]) -> None:
        """Write a cancellation the database could not take at once, until it does."""
        backoff = Backoff(ceiling=CANCEL_RETRY_SECONDS)
        try:
            while True:
                try:
                    run = await attempt
                    if not run.finished:
                        await self.finish(run_id, "cancelled")
                    return
                except DATABASE_ERRORS as exc:
                    logger.warning("run %s: writing its cancellation failed: %r", run_id, exc)
                    await asyncio.sleep(backoff.delay())
                    attempt = asyncio.create_task(self._store.request_cancel(run_id))
        finally:
            self._cancelling.discard(run_id)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def reconcile(self) -> None:
        """Finish runs with every case stored; queue again the cases of runs with no job."""
        for run_id in await self._store.runs_to_reconcile():
            if run_id in self._cancelling:
                continue
            queued = await self._store.requeue_pending(run_id)
            if queued:
                logger.warning("run %s had no job left: %d cases queued again", run_id, queued)
            else:
                await self.finish(run_id, "completed")

    async def _sweep(self) -> None:
        backoff = Backoff(ceiling=self._reconcile_seconds)
        while True:
            try:
                await self.reconcile()
            except DATABASE_ERRORS as exc:  # the database is away: not ready until it is back
                logger.warning("reconciling runs failed: %r", exc)
                self._links.down(SWEEP_LINK, exc)
                delay = backoff.delay()
            except Exception:  # a defect: logged, and tried again at the next sweep
                logger.exception("reconciling runs failed")
                delay = self._reconcile_seconds
            else:
                self._links.up(SWEEP_LINK)
                backoff.reset()
                delay = self._reconcile_seconds
            await asyncio.sleep(delay)

    async def aclose(self) -> None:
        """Stop the sweep and the worker (cases in flight finish or go back to the queue)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        if self.worker is not None:
            await self.worker.aclose()
        if self._background:  # cancellations still unwritten get a last chance
            _, pending = await asyncio.wait(self._background, timeout=CANCEL_WAIT_SECONDS)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await self._executor.aclose()
