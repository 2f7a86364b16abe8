"""Cases, results, events and cached replies of runs (the per-case half of the store).

A finished case is stored in one transaction that inserts its result and its two events
(``case_completed``, ``progress``) and advances the run's counters; cases finishing while a
commit is under way share the next transaction. The run row is updated
first, so concurrent writers of one run queue on its row lock and event numbers are
committed in order: a reader never sees event N+1 before event N. On PostgreSQL that
transaction is a single statement per run (``pg_results``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, func, insert, select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession

from app.errors import RunNotFound
from app.evaluation.arms import RunArm
from app.evaluation.records import ResultRecord
from app.runs.models import Page, ResultFacts, StoredCase, StoredEvent
from app.runs.postgres.pg_results import store_run_results
from app.runs.storage.store_base import StoreBase, decode_cursor, encode_cursor, utc_now
from app.runs.summary import graders_column, target_usage_column
from app.runs.tables import CachedResponseRow, CaseRow, EventRow, ResultRow, RunRow

logger = logging.getLogger("app.runs.storage.store")
RESULT_BATCH = 500
"""Records committed in one transaction at most. A commit's time is mostly its round trips
to the database thread, each of which waits for the busy event loop, so it hardly grows with
the batch: batches must be large for the writer to keep pace with the cases."""
RESULT_BACKLOG = 2 * RESULT_BATCH
"""Records handed over and not yet committed beyond which ``hand_over_result`` waits."""
CASES, RESULTS, EVENTS, RUNS = (
    cast(Table, row.__table__) for row in (CaseRow, ResultRow, EventRow, RunRow)
)
"""The tables themselves, for Core statements (the ORM's bulk paths cost more per row)."""


def _result_values(run_id: str, seq: int, record: ResultRecord) -> dict[str, Any]:
    usage = record.usage
    return {
        "run_id": run_id,
        "case_seq": seq,
        "eval_id": record.eval_id,
        "status": record.status,
        "score": record.score,
        "candidate_input_tokens": usage.candidate.input_tokens,
        "candidate_output_tokens": usage.candidate.output_tokens,
        "judge_input_tokens": usage.judge.input_tokens,
        "judge_output_tokens": usage.judge.output_tokens,
        "candidate_calls": record.attempts.candidate,
        "judge_calls": record.attempts.judge,
        "candidate_answer": record.candidate_answer,
        "record": record.model_dump_json(by_alias=True),
        "graders": graders_column(record),
        "created_at": utc_now(),
        "cost_usd": record.cost_usd.total(),
        "arm": record.arm.index if record.arm is not None else None,
        "target_usage": target_usage_column(record),
    }


def _arm_json(record: ResultRecord) -> str | None:
    """The JSON of a record's arm, as its ``progress`` event carries it."""
    return record.arm.model_dump_json() if record.arm is not None else None


def read_arms(column: str | None) -> tuple[RunArm, ...]:
    """The arms kept in a ``runs.arms`` column (none for a run on one target)."""
    return tuple(RunArm.model_validate(arm) for arm in json.loads(column)) if column else ()


def arms_column(arms: tuple[RunArm, ...]) -> str | None:
    """The ``runs.arms`` column of a run's arms (null for a run on one target)."""
    return json.dumps([arm.model_dump() for arm in arms]) if arms else None


@dataclass
class _PendingResult:
    """A finished case waiting for its commit; ``stored`` resolves to whether it was new."""

    run_id: str
    seq: int
    values: dict[str, Any]
    arm: str | None
    """The JSON of the record's arm (its ``progress`` event says it), null without arms."""
    stored: asyncio.Future[bool]


class RecordsStore(StoreBase):
    """Reads and writes of cases, results, events and the response cache."""

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__(engine)
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        """The engine of PostgreSQL's result writes, each one statement committing itself."""
        self._queued: list[_PendingResult] = []
        self._flusher: asyncio.Task[None] | None = None
        self.on_run_complete: Callable[[str], None] | None = None
        """Called with a run's id after a commit that stored its last case."""

    # Cases and results --------------------------------------------------------------------

    async def pending_case_seqs(self, run_id: str, *, after: int, limit: int) -> list[int]:
        """Positions of cases still to run, in order, after position ``after``."""
        return [case.seq for case in await self.pending_cases(run_id, after=after, limit=limit)]

    async def pending_cases(self, run_id: str, *, after: int, limit: int) -> list[StoredCase]:
        """Cases still to run, in order, after position ``after`` (one query for a batch)."""
        table = CASES
        query = (
            select(table)
            .where(table.c.run_id == run_id, table.c.pending.is_(True), table.c.seq > after)
            .order_by(table.c.seq)
            .limit(limit)
        )
        async with self._session() as session:
            return [_stored_case(row) for row in (await session.execute(query)).all()]

    async def run_spending(self, run_id: str, arm: int | None = None) -> float:
        """What the run's (or one arm's) stored results cost, in US dollars (unknown: 0)."""
        query = select(func.coalesce(func.sum(RESULTS.c.cost_usd), 0.0)).where(
            RESULTS.c.run_id == run_id
        )
        if arm is not None:
            query = query.where(RESULTS.c.arm == arm)
        async with self._session() as session:
            return float((await session.execute(query)).scalar_one())

    async def load_cases(self, keys: Sequence[tuple[str, int]]) -> list[StoredCase]:
        """The stored cases at these ``(run id, case number)`` positions (one query)."""
        table = CASES
        query = select(table).where(tuple_(table.c.run_id, table.c.seq).in_(list(keys)))
        async with self._session() as session:
            return [_stored_case(row) for row in (await session.execute(query)).all()]

    async def load_case(self, run_id: str, seq: int) -> StoredCase:
        """One stored case."""
        async with self._session() as session:
            row = await session.get(CaseRow, (run_id, seq))
            if row is None:
                raise RunNotFound(f"run {run_id!r} has no case number {seq}")
            return _stored_case(row)

    async def replace_result(self, run_id: str, seq: int, record: ResultRecord) -> None:
        """Store a stored case's record graded again (a select-best grader settled)."""
        values = _result_values(run_id, seq, record)
        for key in ("run_id", "case_seq", "created_at"):
            del values[key]
        async with self._writing() as session:
            await session.execute(
                update(RESULTS)
                .where(RESULTS.c.run_id == run_id, RESULTS.c.case_seq == seq)
                .values(**values)
            )

    async def record_result(self, run_id: str, seq: int, record: ResultRecord) -> bool:
        """Store a finished case's record with its events; False if it was already stored.

        Returns once the record is committed. Records finished while a commit is under way
        are committed together in the next transaction (at most ``RESULT_BATCH`` at once).
        """
        return await asyncio.shield(self._queue_result(run_id, seq, record))

    async def hand_over_result(self, run_id: str, seq: int, record: ResultRecord) -> None:
        """Queue a finished case's record for the writer without waiting for its commit.

        The caller moves on to its next case while the writer commits in large batches;
        it waits only while ``RESULT_BACKLOG`` records are still uncommitted. A record that
        was already stored is logged and dropped. A crash before the commit leaves the case
        pending: it runs again on restart, like a case that was still running.
        """
        stored = self._queue_result(run_id, seq, record)
        stored.add_done_callback(_log_duplicate(run_id, seq))
        if len(self._queued) >= RESULT_BACKLOG:
            await asyncio.wait({stored})

    def _queue_result(self, run_id: str, seq: int, record: ResultRecord) -> asyncio.Future[bool]:
        stored = asyncio.get_running_loop().create_future()
        self._queued.append(
            _PendingResult(
                run_id, seq, _result_values(run_id, seq, record), _arm_json(record), stored
            )
        )
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="runs-result-writer")
        return stored

    async def wait_for_writes(self) -> None:
        """Wait until every record handed to ``record_result`` is committed."""
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)

    async def _flush(self) -> None:
        """Commit queued records batch after batch until none is left.

        On PostgreSQL one autocommit connection serves every batch of the flush: checking a
        connection out of the pool pings the server (three round trips), as many as the
        write itself would need otherwise.
        """
        while self._queued:
            batch = self._take_batch()
            try:
                async with self._results_connection() as connection:
                    while True:
                        outcomes = await self._write_results(connection, batch)
                        for pending, stored in zip(batch, outcomes, strict=True):
                            pending.stored.set_result(stored)
                        if not self._queued:
                            break
                        batch = self._take_batch()
            except Exception as exc:
                for pending in batch:
                    if not pending.stored.done():
                        pending.stored.set_exception(exc)

    def _take_batch(self) -> list[_PendingResult]:
        batch = self._queued[:RESULT_BATCH]
        del self._queued[:RESULT_BATCH]
        return batch

    def _results_connection(self) -> AbstractAsyncContextManager[AsyncConnection | None]:
        """PostgreSQL: an autocommit connection; SQLite: none (a transaction per batch)."""
        return self._autocommit.connect() if self.job_queue else nullcontext()

    async def _write_results(
        self, connection: AsyncConnection | None, batch: list[_PendingResult]
    ) -> list[bool]:
        completed: list[str] = []
        try:
            if connection is not None:
                outcomes = await _store_results(connection, batch, completed)
                self._signal_commit()
            else:
                async with self._writing_core() as transaction:
                    outcomes = await _insert_results(transaction, batch, completed)
        except IntegrityError:
            if len(batch) == 1:
                return [False]
            # Another writer stored one of these meanwhile: store them one at a time.
            return [(await self._write_results(connection, [one]))[0] for one in batch]
        if self.on_run_complete is not None:
            for run_id in completed:
                self.on_run_complete(run_id)
        return outcomes

    async def list_results(
        self, run_id: str, *, status: str | None, limit: int, cursor: str | None
    ) -> Page:
        """One page of a run's records (JSON text), in case order."""
        after = int(decode_cursor(cursor, 1)[0]) if cursor is not None else -1
        rows = await self._result_batch(run_id, status=status, after=after, limit=limit + 1)
        items = [record for _, record in rows[:limit]]
        next_cursor = encode_cursor(rows[limit - 1][0]) if len(rows) > limit else None
        return Page(items=items, next_cursor=next_cursor)

    async def iter_results(
        self, run_id: str, *, status: str | None = None, batch_size: int = 200
    ) -> AsyncIterator[str]:
        """Every record of a run (JSON text), in case order, read in short batches."""
        async for _, record in self.iter_numbered_results(
            run_id, status=status, batch_size=batch_size
        ):
            yield record

    async def iter_numbered_results(
        self, run_id: str, *, status: str | None = None, batch_size: int = 200
    ) -> AsyncIterator[tuple[int, str]]:
        """Every record of a run with its case number, in case order, read in short batches."""
        after = -1
        while True:
            rows = await self._result_batch(run_id, status=status, after=after, limit=batch_size)
            for row in rows:
                yield row
            if len(rows) < batch_size:
                return
            after = rows[-1][0]

    async def result_at(self, run_id: str, seq: int) -> str | None:
        """The record (JSON text) of case number ``seq``, or ``None`` while it has none."""
        rows = await self._result_batch(run_id, status=None, after=seq - 1, limit=1)
        return rows[0][1] if rows and rows[0][0] == seq else None

    async def _result_batch(
        self, run_id: str, *, status: str | None, after: int, limit: int
    ) -> Sequence[tuple[int, str]]:
        query = (
            select(ResultRow.case_seq, ResultRow.record)
            .where(ResultRow.run_id == run_id, ResultRow.case_seq > after)
            .order_by(ResultRow.case_seq)
            .limit(limit)
        )
        if status is not None:
            query = query.where(ResultRow.status == status)
        async with self._session() as session:
            return [(seq, record) for seq, record in (await session.execute(query)).all()]

    async def result_facts(self, run_id: str) -> ResultFacts:
        """The distinct outcomes of a run's stored results, counted; its token and call totals.

        A run with arms has the same facts of each arm's results in ``arms``.
        """
        async with self._session() as session:
            arms = read_arms(
                (await session.execute(select(RunRow.arms).where(RunRow.id == run_id))).scalar()
            )
            facts = await _result_facts(session, run_id, None)
            for arm in arms:
                facts.arms.append((arm, await _result_facts(session, run_id, arm.index)))
        return facts

    # Events -------------------------------------------------------------------------------

    async def count_by_status(self) -> dict[str, dict[str, int]]:
        """Runs by status, and cases by result status (``pending`` when not yet run)."""
        async with self._session() as session:
            runs = await session.execute(
                select(RunRow.status, func.count()).group_by(RunRow.status)
            )
            results = await session.execute(
                select(ResultRow.status, func.count()).group_by(ResultRow.status)
            )
            pending = await session.scalar(
                select(func.count()).select_from(CaseRow).where(CaseRow.pending.is_(True))
            )
        cases = {str(status): int(count) for status, count in results.all()}
        cases["pending"] = int(pending or 0)
        return {"runs": {str(status): int(count) for status, count in runs.all()}, "cases": cases}

    async def events_after(self, run_id: str, after: int, *, limit: int = 200) -> list[StoredEvent]:
        """A run's events numbered above ``after``, in order."""
        query = (
            select(EventRow.seq, EventRow.type, EventRow.data)
            .where(EventRow.run_id == run_id, EventRow.seq > after)
            .order_by(EventRow.seq)
            .limit(limit)
        )
        async with self._session() as session:
            return [StoredEvent(*row) for row in (await session.execute(query)).all()]

    # Response cache -----------------------------------------------------------------------

    async def get_cached_response(self, key: str) -> str | None:
        """A cached provider reply (JSON text) stored under ``key``, if any."""
        async with self._session() as session:
            return await session.scalar(
                select(CachedResponseRow.response).where(CachedResponseRow.key == key)
            )

    async def put_cached_response(self, key: str, response: str) -> None:
        """Store a provider reply under ``key`` (the first one stored wins)."""
        try:
            async with self._writing() as session:
                await session.execute(
                    insert(CachedResponseRow).values(
                        key=key, response=response, created_at=utc_now()
                    )
                )
        except IntegrityError:
            return


# The statements of the write path, built once (their compiled forms are cached), run on a
# Core connection: the ORM's session and bulk paths cost several times more per batch.
_MARK_DONE = (
    update(CASES)
    .where(
        CASES.c.run_id == bindparam("b_run"),
        CASES.c.pending.is_(True),
        CASES.c.seq.in_(bindparam("b_seqs", expanding=True)),
    )
    .values(pending=False)
    .returning(CASES.c.seq)
)
_COUNT_DONE = (
    update(RUNS)
    .where(RUNS.c.id == bindparam("b_run"))
    .values(
        done=RUNS.c.done + bindparam("b_count"),
        event_seq=RUNS.c.event_seq + bindparam("b_events"),
    )
    .returning(RUNS.c.done, RUNS.c.total, RUNS.c.event_seq)
)
_INSERT_RESULTS = insert(RESULTS)
_INSERT_EVENTS = insert(EVENTS)


async def _insert_results(
    connection: AsyncConnection, batch: list[_PendingResult], completed: list[str]
) -> list[bool]:
    """Store a batch of records (runs in a fixed order); whether each one was new.

    A case's record is new when the case was still pending: marking it done and reading
    which were pending is one statement, and a record stored twice in one batch counts once.
    """
    by_run = _by_run(batch)
    fresh: set[tuple[str, int]] = set()
    # Runs in a fixed order, so that concurrent writers cannot deadlock on their rows.
    for run_id in sorted(by_run):
        results = by_run[run_id]
        marked = await connection.execute(_MARK_DONE, {"b_run": run_id, "b_seqs": list(results)})
        seqs = sorted(seq for (seq,) in marked)
        if seqs and await _insert_run_results(connection, run_id, [results[s] for s in seqs]):
            completed.append(run_id)
        fresh.update((run_id, seq) for seq in seqs)
    return _outcomes(batch, fresh)


async def _store_results(
    connection: AsyncConnection, batch: list[_PendingResult], completed: list[str]
) -> list[bool]:
    """PostgreSQL: each run's records by one statement (``pg_results``), runs in order.

    Should a later run's statement fail, the runs before it are stored: their cases, run
    again, find their records stored.
    """
    by_run = _by_run(batch)
    fresh: set[tuple[str, int]] = set()
    for run_id in sorted(by_run):
        pendings = list(by_run[run_id].values())
        stored = await store_run_results(
            connection,
            run_id,
            [pending.values for pending in pendings],
            [pending.arm for pending in pendings],
        )
        fresh.update((run_id, seq) for seq in stored.seqs)
        if stored.complete:
            completed.append(run_id)
    return _outcomes(batch, fresh)


def _by_run(batch: list[_PendingResult]) -> dict[str, dict[int, _PendingResult]]:
    """The batch by run, then by case (a case handed over twice counts once)."""
    by_run: dict[str, dict[int, _PendingResult]] = {}
    for pending in batch:
        by_run.setdefault(pending.run_id, {}).setdefault(pending.seq, pending)
    return by_run


def _outcomes(batch: list[_PendingResult], fresh: set[tuple[str, int]]) -> list[bool]:
    """Whether each record of the batch was new: the first of a case still pending."""
    outcomes = []
    for pending in batch:
        key = (pending.run_id, pending.seq)
        outcomes.append(key in fresh)
        fresh.discard(key)
    return outcomes


async def _insert_run_results(
    connection: AsyncConnection, run_id: str, results: list[_PendingResult]
) -> bool:
    """Count a run's new results, insert them and their events; True if they end the run.

    The run row is updated first in the transaction: writers of one run queue on its lock,
    so event numbers are committed in order.
    """
    count = len(results)
    counted = await connection.execute(
        _COUNT_DONE, {"b_run": run_id, "b_count": count, "b_events": 2 * count}
    )
    done, total, last_seq = counted.one()
    first_done, first_seq = done - count, last_seq - 2 * count
    events = []
    for index, pending in enumerate(results):
        progress = json.dumps({"run_id": run_id, "done": first_done + index + 1, "total": total})
        if pending.arm is not None:
            progress = f'{progress[:-1]}, "arm": {pending.arm}}}'
        seq = first_seq + 2 * index
        events.append({"run_id": run_id, "seq": seq + 1, "type": "case_completed",
                       "data": pending.values["record"]})  # fmt: skip
        events.append({"run_id": run_id, "seq": seq + 2, "type": "progress", "data": progress})
    await connection.execute(_INSERT_RESULTS, [pending.values for pending in results])
    await connection.execute(_INSERT_EVENTS, events)
    return bool(done >= total)


def _log_duplicate(run_id: str, seq: int) -> Callable[[asyncio.Future[bool]], None]:
    def check(stored: asyncio.Future[bool]) -> None:
        if stored.cancelled():
            return
        if stored.exception() is not None:
            logger.error(
                "storing case %s of run %s failed", seq, run_id, exc_info=stored.exception()
            )
        elif not stored.result():
            logger.warning("case %s of run %s was already stored", seq, run_id)

    return check


async def _result_facts(session: AsyncSession, run_id: str, arm: int | None) -> ResultFacts:
    """The facts of a run's results (of one arm's, when ``arm`` is given)."""
    columns = (ResultRow.status, ResultRow.score, ResultRow.graders)
    where = [ResultRow.run_id == run_id]
    if arm is not None:
        where.append(ResultRow.arm == arm)
    outcomes = select(*columns, func.count()).where(*where).group_by(*columns)
    tokens = select(
        func.coalesce(func.sum(ResultRow.candidate_input_tokens), 0),
        func.coalesce(func.sum(ResultRow.candidate_output_tokens), 0),
        func.coalesce(func.sum(ResultRow.judge_input_tokens), 0),
        func.coalesce(func.sum(ResultRow.judge_output_tokens), 0),
        func.coalesce(func.sum(ResultRow.candidate_calls), 0),
        func.coalesce(func.sum(ResultRow.judge_calls), 0),
    ).where(*where)
    rows = (await session.execute(outcomes)).all()
    sums = (await session.execute(tokens)).one()
    candidate_in, candidate_out, judge_in, judge_out, candidate_calls, judge_calls = (
        int(value) for value in sums
    )
    return ResultFacts(
        outcomes=[(status, score, graders, count) for status, score, graders, count in rows],
        candidate_input_tokens=candidate_in,
        candidate_output_tokens=candidate_out,
        judge_input_tokens=judge_in,
        judge_output_tokens=judge_out,
        candidate_calls=candidate_calls,
        judge_calls=judge_calls,
    )


def _stored_case(row: Any) -> StoredCase:
    return StoredCase(
        run_id=row.run_id,
        seq=row.seq,
        eval_id=row.eval_id,
        definition=row.definition,
        candidate_answer=row.candidate_answer,
        candidate_output=row.candidate_output,
        pending=row.pending,
        arm=row.arm,
    )
