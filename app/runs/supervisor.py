"""``RunSupervisor``: owns the background tasks that execute runs in this process.

Created in the lifespan. On start it resumes runs left ``queued`` or ``running`` (a crash or
a deploy); on shutdown it stops starting cases, cancels those in flight and leaves the runs
``running`` in the database, so the next start resumes them without repeating finished
cases. Cancelling a run stops it for good and marks it ``cancelled``.

Several replicas may share one database: a run is executed only under a lease (a row
update that one replica wins), renewed by a heartbeat while the run executes. A replica
that dies stops renewing; once its lease expires another replica takes the run over. The
heartbeat also notices a cancel requested through another replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from app.observability.logging import bind_log_context
from app.runs.executor import CaseExecutor
from app.runs.models import RunInfo
from app.runs.store import RunStore
from app.runs.summary import summary_document

logger = logging.getLogger("app.runs.supervisor")


class RunSupervisor:
    """Starts, resumes, cancels and finishes runs; at most ``max_active_runs`` at once."""

    def __init__(
        self,
        store: RunStore,
        executor: CaseExecutor,
        *,
        max_active_runs: int,
        holder: str = "local",
        lease_seconds: float = 30.0,
    ) -> None:
        self._store = store
        self._executor = executor
        self._slots = asyncio.Semaphore(max_active_runs)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._closing = False
        self._holder = holder
        self._lease_seconds = lease_seconds
        self._tick = min(1.0, lease_seconds / 3)
        self._watcher: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Resume every run left queued or running, then watch for runs to take over."""
        await self._adopt(resuming=True)
        self._watcher = asyncio.create_task(self._watch(), name="runs-lease-watcher")

    async def _adopt(self, *, resuming: bool = False) -> None:
        for run_id in await self._store.claimable_run_ids(self._holder):
            if run_id not in self._tasks:
                logger.info("%s run %s", "resuming" if resuming else "taking over", run_id)
                self.submit(run_id)

    async def _watch(self) -> None:
        """Take over runs whose lease expired (their replica died), every half lease."""
        while True:
            await asyncio.sleep(self._lease_seconds / 2)
            try:
                await self._adopt()
            except Exception:
                logger.exception("looking for runs to take over failed")

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
            if not await self._store.claim_run(run_id, self._holder, self._lease_seconds):
                return  # another replica executes it
            try:
                await self._run_leased(run_id)
            finally:
                with contextlib.suppress(Exception):
                    await self._store.release_run(run_id, self._holder)

    async def _run_leased(self, run_id: str) -> None:
        await self._store.mark_running(run_id)
        execution = asyncio.create_task(self._executor.execute_run(run_id))
        heartbeat = asyncio.create_task(self._heartbeat(run_id, execution))
        try:
            await execution
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # this process is stopping: the run stays resumable
            if not await self._store.cancel_requested(run_id):
                return  # the lease was lost: another replica carries on
        except Exception as exc:
            logger.exception("run %s failed", run_id)
            await self.finish(run_id, "failed", error=f"{type(exc).__name__}: {exc}")
            return
        finally:
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
        cancelled = await self._store.cancel_requested(run_id)
        await self.finish(run_id, "cancelled" if cancelled else "completed")

    async def _heartbeat(self, run_id: str, execution: asyncio.Task[None]) -> None:
        """Renew the lease; stop the execution if the run is cancelled or the lease lost."""
        while True:
            await asyncio.sleep(self._tick)
            try:
                cancelled = await self._store.cancel_requested(run_id)
                held = cancelled or await self._store.claim_run(
                    run_id, self._holder, self._lease_seconds
                )
            except Exception:
                logger.exception("renewing the lease of run %s failed", run_id)
                continue
            if cancelled or not held:
                execution.cancel()
                return

    async def finish(self, run_id: str, status: str, *, error: str | None = None) -> None:
        """Give the run its final status and the summary of its stored results."""
        await self._store.wait_for_writes()
        summary = summary_document(await self._store.result_facts(run_id))
        await self._store.finish_run(run_id, status, summary, error=error)

    async def cancel(self, run_id: str) -> RunInfo:
        """Stop a run: no new case starts, in-flight ones are cancelled, results are kept."""
        run = await self._store.request_cancel(run_id)
        if run.finished:
            return run
        task = self._tasks.get(run_id)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.finish(run_id, "cancelled")
        return await self._store.get_run(run_id)

    async def aclose(self) -> None:
        """Stop starting cases, cancel in-flight ones and wait; runs stay resumable."""
        self._closing = True
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
