"""``RunStore``: the only code that talks to the runs database.

Every method is one short transaction. Runs, their life cycle, idempotency keys and regrade
copies live here; cases, results, events and the response cache in
``app.runs.storage.records_store``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Table,
    bindparam,
    delete,
    func,
    insert,
    literal,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import IdempotencyConflict, RunNotFound, RunStateConflict
from app.evaluation.known_answers import candidate_output
from app.runs.database import create_engine, migrate
from app.runs.models import (
    ACTIVE_STATUSES,
    FINISHED_STATUSES,
    RETRYABLE_CASE_STATUSES,
    NewCase,
    NewRun,
    Page,
    RunInfo,
)
from app.runs.notify.webhooks import Outbox
from app.runs.postgres.jobs import count_jobs, delete_run_jobs, enqueue_cases, runs_without_jobs
from app.runs.storage.records_store import RecordsStore, arms_column, read_arms
from app.runs.storage.reviews_store import ReviewsStore
from app.runs.storage.store_base import aware, decode_cursor, encode_cursor, utc_now
from app.runs.storage.tags_store import TagsStore, insert_tags
from app.runs.tables import CaseRow, EventRow, IdempotencyKeyRow, ResultRow, RunRow, RunTagRow

CASE_INSERT_BATCH = 500
_INSERT_CASES = insert(cast(Table, CaseRow.__table__))
"""Cases are inserted through the table (Core): the ORM's bulk path cost 0.4 s per 10 000."""

OUTPUT_MARKERS = ('"turns":[', '"file_changes":"')
"""Text every stored record with a conversation's turns or a workspace's changes holds (keys
of the record's JSON: inside a string value the quotes would be escaped)."""


def _run_info(row: RunRow) -> RunInfo:
    created_at = aware(row.created_at)
    assert created_at is not None
    return RunInfo(
        id=row.id,
        kind=row.kind,
        status=row.status,
        parent_run_id=row.parent_run_id,
        owner=row.owner,
        target=row.target,
        judge_target=row.judge_target,
        name=row.name,
        total=row.total,
        done=row.done,
        summary=json.loads(row.summary) if row.summary else None,
        error=row.error,
        created_at=created_at,
        started_at=aware(row.started_at),
        finished_at=aware(row.finished_at),
        arms=read_arms(row.arms),
    )


class RunStore(RecordsStore, ReviewsStore, TagsStore):
    """Async access to runs, cases, results, events, idempotency keys and cached replies."""

    outbox: Outbox | None = None
    """Where a finished run's webhook event is written (set when endpoints are configured)."""

    @classmethod
    async def open(cls, url: str) -> RunStore:
        """Connect to ``url`` and migrate its schema to the latest revision."""
        engine = create_engine(url)
        await migrate(engine)
        return cls(engine)

    async def aclose(self) -> None:
        """Finish pending writes, then close every pooled connection."""
        await self.wait_for_writes()
        await self.engine.dispose()

    # Runs ---------------------------------------------------------------------------------

    async def create_run(
        self,
        run: NewRun,
        cases: Iterable[NewCase],
        *,
        idempotency: tuple[str, str] | None = None,
    ) -> tuple[RunInfo, bool]:
        """Store a queued run and its cases; returns the run and whether it is new.

        With ``idempotency=(key, body_hash)``, a key seen before with the same hash returns
        the run it created; with another hash it raises ``IdempotencyConflict``.
        """
        if idempotency is not None:
            existing = await self.run_for_key(*idempotency)
            if existing is not None:
                return existing, False
        try:
            async with self._writing() as session:
                await self._insert_run(session, run, cases, idempotency)
        except IntegrityError:
            # Another request with the same key won the race.
            if idempotency is not None:
                existing = await self.run_for_key(*idempotency)
                if existing is not None:
                    return existing, False
            raise
        return await self.get_run(run.id), True

    async def _insert_run(
        self,
        session: AsyncSession,
        run: NewRun,
        cases: Iterable[NewCase],
        idempotency: tuple[str, str] | None,
    ) -> None:
        now = utc_now()
        await session.execute(
            insert(RunRow).values(
                id=run.id,
                kind=run.kind,
                status="queued",
                parent_run_id=run.parent_run_id,
                owner=run.owner,
                target=run.target,
                judge_target=run.judge_target,
                name=run.name[:500] if run.name else None,
                spec=json.dumps(run.spec, ensure_ascii=False),
                arms=arms_column(run.arms),
                total=0,
                done=0,
                event_seq=0,
                cancel_requested=False,
                created_at=now,
            )
        )
        await insert_tags(session, run.id, run.tags)
        total = 0
        batch: list[dict[str, Any]] = []
        for case in cases:
            batch.append(
                {
                    "run_id": run.id,
                    "seq": total,
                    "eval_id": case.eval_id,
                    "definition": case.definition,
                    "candidate_answer": case.candidate_answer,
                    "pending": True,
                    "arm": case.arm,
                }
            )
            total += 1
            if len(batch) >= CASE_INSERT_BATCH:
                await session.execute(_INSERT_CASES, batch)
                batch = []
        if batch:
            await session.execute(_INSERT_CASES, batch)
        await session.execute(update(RunRow).where(RunRow.id == run.id).values(total=total))
        if self.job_queue:
            await enqueue_cases(session, run.id, range(total))
        if idempotency is not None:
            key, body_hash = idempotency
            await session.execute(
                insert(IdempotencyKeyRow).values(
                    key=key, body_hash=body_hash, run_id=run.id, created_at=now
                )
            )

    async def create_regrade_run(self, run: NewRun, source_run_id: str) -> RunInfo:
        """Store a queued run over the cases of ``source_run_id`` that have a stored answer.

        Each case keeps its position and carries the candidate answer to grade again, and
        what else the candidate produced (a conversation's turns, a workspace's changes).
        """
        answered = (
            select(
                literal(run.id),
                CaseRow.seq,
                CaseRow.eval_id,
                CaseRow.definition,
                ResultRow.candidate_answer,
                true(),
                CaseRow.arm,
            )
            .join(
                ResultRow,
                (ResultRow.run_id == CaseRow.run_id) & (ResultRow.case_seq == CaseRow.seq),
            )
            .where(CaseRow.run_id == source_run_id, ResultRow.candidate_answer.is_not(None))
        )
        columns = ["run_id", "seq", "eval_id", "definition", "candidate_answer", "pending", "arm"]
        async with self._writing() as session:
            await self._insert_run(session, run, (), None)
            copied = await session.execute(insert(CaseRow).from_select(columns, answered))
            await _copy_candidate_outputs(session, source_run_id, run.id)
            total = int(getattr(copied, "rowcount", 0) or 0)
            await session.execute(update(RunRow).where(RunRow.id == run.id).values(total=total))
            if self.job_queue:
                seqs = await session.scalars(select(CaseRow.seq).where(CaseRow.run_id == run.id))
                await enqueue_cases(session, run.id, list(seqs))
        return await self.get_run(run.id)

    async def run_for_key(self, key: str, body_hash: str) -> RunInfo | None:
        """The run an ``Idempotency-Key`` created; ``IdempotencyConflict`` for another body."""
        async with self._session() as session:
            row = await session.get(IdempotencyKeyRow, key)
            if row is None:
                return None
            if row.body_hash != body_hash:
                raise IdempotencyConflict(
                    "this Idempotency-Key was already used with a different request body",
                    extra={"run_id": row.run_id},
                )
            run_id = row.run_id
        return await self.get_run(run_id)

    async def get_run(self, run_id: str) -> RunInfo:
        """The run with this id; raises ``RunNotFound``."""
        async with self._session() as session:
            row = await session.get(RunRow, run_id)
            if row is None:
                raise RunNotFound(f"no run has the id {run_id!r}")
            return _run_info(row)

    async def list_runs(
        self,
        *,
        status: str | None,
        limit: int,
        cursor: str | None,
        owner: str | None = None,
        tag: str | None = None,
        name: str | None = None,
    ) -> Page:
        """Runs, newest first, ``limit`` per page.

        Optionally only those of one status, one owner, carrying ``tag``, named ``name``.
        """
        query = select(RunRow).order_by(RunRow.created_at.desc(), RunRow.id.desc())
        if status is not None:
            query = query.where(RunRow.status == status)
        if tag is not None:
            query = query.where(RunRow.id.in_(select(RunTagRow.run_id).where(RunTagRow.tag == tag)))
        if name is not None:
            query = query.where(RunRow.name == name)
        if owner is not None:
            query = query.where(RunRow.owner == owner)
        if cursor is not None:
            created, run_id = decode_cursor(cursor, 2)
            moment = datetime.fromisoformat(str(created))
            query = query.where(
                or_(
                    RunRow.created_at < moment,
                    (RunRow.created_at == moment) & (RunRow.id < str(run_id)),
                )
            )
        async with self._session() as session:
            rows = (await session.scalars(query.limit(limit + 1))).all()
        runs = [_run_info(row) for row in rows[:limit]]
        next_cursor = None
        if len(rows) > limit:
            last = runs[-1]
            next_cursor = encode_cursor(last.created_at.isoformat(), last.id)
        return Page(items=runs, next_cursor=next_cursor)

    async def load_spec(self, run_id: str) -> dict[str, Any]:
        """The stored specification of a run (suite without cases, files, plan)."""
        async with self._session() as session:
            spec = await session.scalar(select(RunRow.spec).where(RunRow.id == run_id))
        if spec is None:
            raise RunNotFound(f"no run has the id {run_id!r}")
        loaded: dict[str, Any] = json.loads(spec)
        return loaded

    async def count_active_runs(self, owner: str | None) -> int:
        """Runs queued or running, of one owner (of everyone when ``owner`` is None)."""
        query = select(func.count()).select_from(RunRow).where(RunRow.status.in_(ACTIVE_STATUSES))
        if owner is not None:
            query = query.where(RunRow.owner == owner)
        async with self._session() as session:
            return int(await session.scalar(query) or 0)

    async def active_run_ids(self) -> list[str]:
        """Runs still ``queued`` or ``running``, oldest first (to resume on start-up)."""
        query = (
            select(RunRow.id)
            .where(RunRow.status.in_(ACTIVE_STATUSES))
            .order_by(RunRow.created_at, RunRow.id)
        )
        async with self._session() as session:
            return list((await session.scalars(query)).all())

    async def mark_running(self, run_id: str) -> None:
        """Move a queued run to ``running`` (keeps the first start time on resume)."""
        async with self._writing() as session:
            await session.execute(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.status.in_(ACTIVE_STATUSES))
                .values(status="running", started_at=func.coalesce(RunRow.started_at, utc_now()))
            )

    async def finish_run(
        self, run_id: str, status: str, summary: dict[str, Any], *, error: str | None = None
    ) -> bool:
        """Give an active run its final status and summary, and add ``run_completed``.

        Returns False when the run was already finished (nothing changes then).
        """
        now = utc_now()
        async with self._writing() as session:
            seq = await session.scalar(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.status.in_(ACTIVE_STATUSES))
                .values(
                    status=status,
                    summary=json.dumps(summary),
                    error=error,
                    finished_at=now,
                    event_seq=RunRow.event_seq + 1,
                )
                .returning(RunRow.event_seq)
            )
            if seq is None:
                return False
            run = await session.get(RunRow, run_id)
            assert run is not None
            data = {
                "run_id": run_id,
                "status": status,
                "done": run.done,
                "total": run.total,
                "summary": summary,
            }
            await session.execute(
                insert(EventRow).values(
                    run_id=run_id, seq=seq, type="run_completed", data=json.dumps(data)
                )
            )
            if self.outbox is not None:
                await self.outbox.enqueue(session, run_id, status, run.owner, now)
        return True

    async def delete_run(self, run_id: str) -> None:
        """Remove a finished run with its cases, results and events."""
        async with self._writing() as session:
            run = await session.get(RunRow, run_id, with_for_update=True)
            if run is None:
                raise RunNotFound(f"no run has the id {run_id!r}")
            if run.status not in FINISHED_STATUSES:
                raise RunStateConflict(
                    f"run {run_id!r} is {run.status}; cancel it or wait until it finishes"
                )
            for table in (EventRow, ResultRow, CaseRow, IdempotencyKeyRow, RunTagRow):
                await session.execute(delete(table).where(table.run_id == run_id))
            await session.execute(delete(RunRow).where(RunRow.id == run_id))

    async def reopen_for_retry(self, run_id: str) -> int:
        """Drop a finished run's ``error``/``judge_error`` results and queue it again.

        Returns how many cases will run again (those dropped plus any never run).
        """
        async with self._writing() as session:
            run = await session.get(RunRow, run_id, with_for_update=True)
            if run is None:
                raise RunNotFound(f"no run has the id {run_id!r}")
            if run.status not in FINISHED_STATUSES:
                raise RunStateConflict(f"run {run_id!r} is {run.status}; retry needs it finished")
            failed = select(ResultRow.case_seq).where(
                ResultRow.run_id == run_id, ResultRow.status.in_(RETRYABLE_CASE_STATUSES)
            )
            failed_count = await session.scalar(select(func.count()).select_from(failed.subquery()))
            if not failed_count and run.done >= run.total:
                return 0
            await session.execute(
                update(CaseRow)
                .where(CaseRow.run_id == run_id, CaseRow.seq.in_(failed))
                .values(pending=True)
            )
            removed = await session.execute(
                delete(ResultRow).where(
                    ResultRow.run_id == run_id, ResultRow.status.in_(RETRYABLE_CASE_STATUSES)
                )
            )
            removed_count = int(getattr(removed, "rowcount", 0) or 0)
            run.done -= removed_count
            run.status = "queued"
            run.summary = None
            run.error = None
            run.finished_at = None
            run.cancel_requested = False
            if self.job_queue:
                await enqueue_cases(session, run_id, await self._pending_seqs(session, run_id))
            return run.total - run.done

    async def _pending_seqs(self, session: AsyncSession, run_id: str) -> list[int]:
        query = select(CaseRow.seq).where(CaseRow.run_id == run_id, CaseRow.pending.is_(True))
        return list(await session.scalars(query.order_by(CaseRow.seq)))

    async def request_cancel(self, run_id: str) -> RunInfo:
        """Flag an active run as cancelled-on-request (workers stop starting its cases).

        With a job queue, the run's jobs are deleted in the same transaction: no worker
        claims one of its cases afterwards, and those running one are told to stop.
        """
        async with self._writing() as session:
            flagged = await session.scalar(
                update(RunRow)
                .where(RunRow.id == run_id, RunRow.status.in_(ACTIVE_STATUSES))
                .values(cancel_requested=True)
                .returning(RunRow.id)
            )
            if flagged is not None and self.job_queue:
                await delete_run_jobs(session, run_id)
        return await self.get_run(run_id)

    # The job queue (PostgreSQL) ----------------------------------------------------------

    async def drop_run_jobs(self, run_id: str) -> None:
        """Delete the run's jobs and stop those running, leaving its row alone.

        What a cancellation does first when the run's row is locked: the jobs' table does
        not wait for it, so no worker starts another case of the run meanwhile.
        """
        async with self._writing() as session:
            await delete_run_jobs(session, run_id)

    async def runs_to_reconcile(self) -> list[str]:
        """Active, uncancelled runs with no case queued or picked, oldest first.

        Such a run either has every case stored (it was not finished: its worker died at
        that moment) or lost jobs (a worker stopped while running them).
        """
        query = (
            select(RunRow.id)
            .where(RunRow.status.in_(ACTIVE_STATUSES), RunRow.cancel_requested.is_(False))
            .order_by(RunRow.created_at, RunRow.id)
        )
        async with self._session() as session:
            active = list(await session.scalars(query))
            return await runs_without_jobs(session, active)

    async def requeue_pending(self, run_id: str) -> int:
        """Queue a job for each case of the run still to run; returns how many."""
        async with self._writing() as session:
            seqs = await self._pending_seqs(session, run_id)
            await enqueue_cases(session, run_id, seqs)
        return len(seqs)

    async def count_by_status(self) -> dict[str, dict[str, int]]:
        """Runs and cases by status and, with a job queue, its case jobs (queued, picked)."""
        counts = await super().count_by_status()
        if self.job_queue:
            async with self._session() as session:
                counts["case_jobs"] = {"queued": 0, "picked": 0, **await count_jobs(session)}
        return counts

    async def cancel_requested(self, run_id: str) -> bool:
        """Whether cancelling this run was requested."""
        async with self._session() as session:
            flag = await session.scalar(select(RunRow.cancel_requested).where(RunRow.id == run_id))
        return bool(flag)


async def _copy_candidate_outputs(session: AsyncSession, source_run_id: str, run_id: str) -> None:
    """Give a regrade's cases what their earlier records hold besides the answer.

    Only records holding one of ``OUTPUT_MARKERS`` are read (a prefilter: the record's JSON
    decides), so a regrade of plain answers reads no record.
    """
    query = select(ResultRow.case_seq, ResultRow.record).where(
        ResultRow.run_id == source_run_id,
        ResultRow.candidate_answer.is_not(None),
        or_(*(ResultRow.record.contains(marker) for marker in OUTPUT_MARKERS)),
    )
    outputs = [
        {"b_seq": seq, "b_output": output}
        for seq, record in (await session.execute(query)).all()
        if (output := candidate_output(record)) is not None
    ]
    if outputs:
        cases = cast(Table, CaseRow.__table__)
        fill = (
            update(cases)
            .where(cases.c.run_id == run_id, cases.c.seq == bindparam("b_seq"))
            .values(candidate_output=bindparam("b_output"))
        )
        await session.execute(fill, outputs)
