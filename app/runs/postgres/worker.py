"""A worker of the task queue: claims case jobs from pgqueuer and runs them (PostgreSQL).

pgqueuer's ``QueueManager`` does the claiming (``FOR UPDATE SKIP LOCKED`` in batches, woken
by NOTIFY), beats a heartbeat for every job it holds, hands back to the pool the jobs of a
worker whose heartbeat stopped (after ``claim_timeout_seconds``), and cancels a job when
its run is cancelled. Each job is one case: ``FleetRuns.run_case``.

The manager runs on one dedicated connection. When that connection dies (the database
restarted, a network cut) the manager stops claiming, lets the cases in flight finish, and
the worker connects again with backoff and starts a new manager; the jobs the old one still
held are put back in the queue at once (their cases are stored at most once anyway). Until it
is back, the link ``case_queue`` is down (``/readyz``, ``/metrics``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, Protocol

import asyncpg
from pgqueuer import Queries, QueueManager
from pgqueuer.errors import RetryRequested
from pgqueuer.models import Context, Job

from app.observability.links import Backoff, Links
from app.runs.postgres.jobs import ENTRYPOINT, parse_job_key, release_jobs_of

logger = logging.getLogger("app.runs.postgres.worker")
BATCH_SIZE = 10
RETRY_DELAY = timedelta(seconds=2)
DEQUEUE_TIMEOUT = timedelta(seconds=5)
LINK = "case_queue"
CONNECT_TIMEOUT_SECONDS = 5.0
COMMAND_TIMEOUT_SECONDS = 30.0
"""The longest a query of the queue may take: a connection cut without a word (a network
partition) then fails like a closed one instead of holding the worker for TCP's minutes."""


class WorkerObserver(Protocol):
    """Where a worker reports its claims and finished cases (the metrics)."""

    def record_case_claimed(self, worker: str) -> None:
        """A job was claimed by ``worker``."""
        ...

    def record_case_finished(self, worker: str, outcome: str) -> None:
        """A claimed case ended: ``stored``, ``skipped``, ``cancelled`` or ``requeued``."""
        ...


class CaseWorker:
    """One process's worker of the queue, holding at most ``max_cases`` jobs at once."""

    def __init__(
        self,
        run_case: Callable[[str, int], Awaitable[bool]],
        *,
        dsn: str,
        name: str,
        max_cases: int,
        claim_timeout_seconds: float,
        observer: WorkerObserver,
        links: Links | None = None,
    ) -> None:
        self.name = name
        self._run_case = run_case
        self._dsn = dsn
        self._max_cases = max(max_cases, 2 * BATCH_SIZE)
        self._claim_timeout = timedelta(seconds=claim_timeout_seconds)
        self._observer = observer
        self._links = links or Links()
        self._manager: QueueManager | None = None
        """The manager claiming now (None while the worker connects again)."""
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        """Connect and start claiming jobs in the background (reconnecting as needed)."""
        connection = await self._connect()
        self._links.up(LINK)
        self._task = asyncio.create_task(self._keep_claiming(connection), name="case-worker")

    async def _connect(self) -> Any:
        return await asyncpg.connect(
            self._dsn, timeout=CONNECT_TIMEOUT_SECONDS, command_timeout=COMMAND_TIMEOUT_SECONDS
        )

    async def _keep_claiming(self, connection: Any) -> None:
        """Claim on ``connection`` until it dies; then connect again, until stopped."""
        backoff = Backoff()
        while True:
            manager = self._manager = self._new_manager(connection)

            def lost(_connection: Any, manager: QueueManager = manager) -> None:
                self._links.down(LINK, "connection lost")
                manager.shutdown.set()  # stop claiming; the cases in flight finish first

            connection.add_termination_listener(lost)
            try:
                error = await self._claim(manager)
            except asyncio.CancelledError:  # stopping, past the grace period
                connection.remove_termination_listener(lost)
                connection.terminate()
                raise
            self._manager = None
            connection.remove_termination_listener(lost)
            if self._stopping.is_set():
                with contextlib.suppress(Exception):
                    await connection.close(timeout=CONNECT_TIMEOUT_SECONDS)
                return
            connection.terminate()
            self._links.down(LINK, error or "connection lost")
            logger.warning("the case queue's connection was lost (%r): reconnecting", error)
            connection = await self._reconnect(backoff, manager)
            if connection is None:
                return
            logger.info("the case queue's connection is back")
            self._links.up(LINK)

    def _new_manager(self, connection: Any) -> QueueManager:
        manager = QueueManager(Queries.from_asyncpg_connection(connection))
        manager.entrypoint(ENTRYPOINT, accepts_context=True)(self._run_job)
        return manager

    async def _claim(self, manager: QueueManager) -> BaseException | None:
        """Run the manager until it stops; the error that stopped it, if any."""
        try:
            await manager.run(
                dequeue_timeout=DEQUEUE_TIMEOUT,
                batch_size=BATCH_SIZE,
                max_concurrent_tasks=self._max_cases,
                heartbeat_timeout=self._claim_timeout,
                log_aggregation_interval=timedelta(0),
            )
        except Exception as exc:
            return exc
        return None

    async def _reconnect(self, backoff: Backoff, lost: QueueManager) -> Any:
        """A new connection, tried with backoff; None once the worker stops meanwhile.

        The jobs the lost manager still holds are handed back first: its cases in flight
        have ended (finished, or failed to store and to say so), and their jobs would
        otherwise wait for the claim timeout.
        """
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(backoff.delay()):
                    await self._stopping.wait()
            if self._stopping.is_set():
                return None
            try:
                connection = await self._connect()
            except Exception as exc:  # whatever the driver raises, try again later
                self._links.down(LINK, exc)
                continue
            try:
                released = await release_jobs_of(connection, lost.queue_manager_id)
            except Exception as exc:
                self._links.down(LINK, exc)
                connection.terminate()
                continue
            if released:
                logger.warning("%d cases of the lost connection queued again", released)
            backoff.reset()
            return connection
        return None

    async def _run_job(self, job: Job, context: Context) -> None:
        if job.payload is None:
            return
        run_id, seq = parse_job_key(job.payload)
        self._observer.record_case_claimed(self.name)
        outcome, stored = "stored", False
        try:
            # Leaving this scope early means the run was cancelled (pgqueuer's event).
            with context.cancellation:
                stored = await self._run_case(run_id, seq)
            if context.cancellation.cancel_called:
                outcome = "cancelled"
            elif not stored:  # stored before (its claim outlived), or its run is gone
                outcome = "skipped"
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
        """Stop claiming, let the cases in flight finish (up to ``grace_seconds``), close.

        While the database is away the cases in flight could not be stored anyway: they
        are stopped at once (other workers pick them up after the claim timeout).
        """
        self._stopping.set()
        if self._task is None:
            return
        manager = self._manager
        if manager is not None:  # else connecting again: nothing is in flight
            manager.shutdown.set()
            try:
                async with asyncio.timeout(grace_seconds if self._links_up() else 0.5):
                    await asyncio.shield(self._task)
            except TimeoutError:
                pass  # the cases still running go back to the queue
            except Exception:
                logger.exception("the case worker stopped with an error")
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    def _links_up(self) -> bool:
        state = self._links.states().get(LINK)
        return state is None or state.up
