"""A worker of the task queue: claims case jobs from pgqueuer and runs them (PostgreSQL).

pgqueuer's ``QueueManager`` does the claiming (``FOR UPDATE SKIP LOCKED`` in batches, woken
by NOTIFY), beats a heartbeat for every job it holds, hands back to the pool the jobs of a
worker whose heartbeat stopped (after ``claim_timeout_seconds``), and cancels a job when
its run is cancelled. Each job is one case: ``FleetRuns.run_case``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, Protocol

import asyncpg
from pgqueuer import Queries, QueueManager
from pgqueuer.errors import RetryRequested
from pgqueuer.models import Context, Job

from app.runs.jobs import ENTRYPOINT, parse_job_key

logger = logging.getLogger("app.runs.worker")
BATCH_SIZE = 10
RETRY_DELAY = timedelta(seconds=2)
DEQUEUE_TIMEOUT = timedelta(seconds=5)


class WorkerObserver(Protocol):
    """Where a worker reports its claims and finished cases (the metrics)."""

    def record_case_claimed(self, worker: str) -> None:
        """A job was claimed by ``worker``."""
        ...

    def record_case_finished(self, worker: str, outcome: str) -> None:
        """A claimed case ended: ``stored``, ``cancelled`` or ``requeued``."""
        ...


class CaseWorker:
    """One process's worker of the queue, holding at most ``max_cases`` jobs at once."""

    def __init__(
        self,
        run_case: Callable[[str, int], Awaitable[None]],
        *,
        dsn: str,
        name: str,
        max_cases: int,
        claim_timeout_seconds: float,
        observer: WorkerObserver,
    ) -> None:
        self.name = name
        self._run_case = run_case
        self._dsn = dsn
        self._max_cases = max(max_cases, 2 * BATCH_SIZE)
        self._claim_timeout = timedelta(seconds=claim_timeout_seconds)
        self._observer = observer
        self._connection: Any = None
        self._manager: QueueManager | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Connect and start claiming jobs in the background."""
        self._connection = await asyncpg.connect(self._dsn)
        manager = QueueManager(Queries.from_asyncpg_connection(self._connection))
        manager.entrypoint(ENTRYPOINT, accepts_context=True)(self._run_job)
        self._manager = manager
        self._task = asyncio.create_task(
            manager.run(
                dequeue_timeout=DEQUEUE_TIMEOUT,
                batch_size=BATCH_SIZE,
                max_concurrent_tasks=self._max_cases,
                heartbeat_timeout=self._claim_timeout,
                log_aggregation_interval=timedelta(0),
            ),
            name="case-worker",
        )

    async def _run_job(self, job: Job, context: Context) -> None:
        if job.payload is None:
            return
        run_id, seq = parse_job_key(job.payload)
        self._observer.record_case_claimed(self.name)
        outcome = "stored"
        try:
            # Leaving this scope early means the run was cancelled (pgqueuer's event).
            with context.cancellation:
                await self._run_case(run_id, seq)
            if context.cancellation.cancel_called:
                outcome = "cancelled"
        except asyncio.CancelledError:
            # This worker is stopping (a cancelled run ends inside the scope above): the
            # case goes back to the queue for another worker.
            outcome = "requeued"
            raise RetryRequested(timedelta(0), reason="worker stopping") from None
        except Exception as exc:
            # The store failed (the evaluation itself never raises): try the case again.
            outcome = "requeued"
            logger.warning("case %s of run %s: %r; queued again", seq, run_id, exc)
            raise RetryRequested(RETRY_DELAY, reason=type(exc).__name__) from exc
        finally:
            self._observer.record_case_finished(self.name, outcome)

    async def aclose(self, grace_seconds: float = 20.0) -> None:
        """Stop claiming, let the cases in flight finish (up to ``grace_seconds``), close."""
        if self._manager is not None and self._task is not None:
            self._manager.shutdown.set()
            try:
                async with asyncio.timeout(grace_seconds):
                    await asyncio.shield(self._task)
            except TimeoutError:
                self._task.cancel()  # the cases still running go back to the queue
                await asyncio.gather(self._task, return_exceptions=True)
            except Exception:
                logger.exception("the case worker stopped with an error")
        if self._connection is not None:
            await self._connection.close()
