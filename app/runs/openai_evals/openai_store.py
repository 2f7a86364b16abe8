"""Evals, files and eval runs of the OpenAI Evals surface, and its views of run results.

An eval run is a durable run (same id) plus a row saying which eval it belongs to; its
output items are the run's result records joined with the cases that hold each item.
Every method is one short transaction through the run store's sessions (and its SQLite
write lock, so the two never collide).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Row, Select, delete, func, select, update
from sqlalchemy.exc import IntegrityError

from app.errors import NotFound
from app.runs.storage.store import RunStore
from app.runs.storage.store_base import aware, utc_now
from app.runs.summary import read_graders, read_target_usage
from app.runs.tables import (
    Base,
    CaseRow,
    OpenAIEvalRow,
    OpenAIEvalRunRow,
    OpenAIFileRow,
    ResultRow,
    RunRow,
)


@dataclass(frozen=True)
class RunTally:
    """What an eval run's object counts over the results stored so far."""

    statuses: dict[str, int]
    """Results by record status."""
    graders: dict[str, tuple[int, int]]
    """(passed, failed) by grader name; a grader that could not grade counts in neither."""
    targets: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """(requests, input, output tokens) by target called, whatever the role: requests sent
    (failed tries included), tokens of every reply."""
    unattributed: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """(requests, input, output tokens) by role of results stored before ``targets`` was
    kept (``results.target_usage`` null): not in ``targets``."""


@dataclass(frozen=True)
class StoredEval:
    """An eval as stored."""

    id: str
    owner: str | None
    name: str
    metadata: dict[str, str]
    data_source_config: dict[str, Any]
    testing_criteria: list[dict[str, Any]]
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class StoredEvalRun:
    """What an eval run adds to its durable run."""

    id: str
    eval_id: str
    name: str
    model: str
    data_source: dict[str, Any]
    metadata: dict[str, str]
    created_at: datetime
    imported: dict[str, Any] | None = None
    """The source's run object, for a run imported from another Evals API (read-only)."""


@dataclass(frozen=True)
class StoredFile:
    """An uploaded file."""

    id: str
    owner: str | None
    filename: str
    purpose: str
    bytes: int
    content: str
    created_at: datetime
    rows: int | None = None
    """Its rows, counted when it was uploaded (None: not counted)."""


@dataclass(frozen=True)
class StoredOutput:
    """One finished case of an eval run: its position, case definition and result record."""

    seq: int
    definition: dict[str, Any]
    record: dict[str, Any]
    created_at: datetime


def _moment(value: datetime) -> datetime:
    moment = aware(value)
    assert moment is not None
    return moment


def _eval(row: OpenAIEvalRow) -> StoredEval:
    return StoredEval(
        id=row.id,
        owner=row.owner,
        name=row.name,
        metadata=json.loads(row.metadata_json),
        data_source_config=json.loads(row.data_source_config),
        testing_criteria=json.loads(row.testing_criteria),
        created_at=_moment(row.created_at),
        updated_at=_moment(row.updated_at),
    )


def _eval_run(row: OpenAIEvalRunRow) -> StoredEvalRun:
    return StoredEvalRun(
        id=row.id,
        eval_id=row.eval_id,
        name=row.name,
        model=row.model,
        data_source=json.loads(row.data_source),
        metadata=json.loads(row.metadata_json),
        created_at=_moment(row.created_at),
        imported=json.loads(row.imported) if row.imported else None,
    )


T = TypeVar("T")


def _page(rows: Sequence[T], limit: int) -> tuple[list[T], bool]:
    return list(rows[:limit]), len(rows) > limit


class OpenAIEvalStore:
    """Async access to the OpenAI surface's tables, through ``runs``' sessions.

    It shares the run store's sessions and write lock (same package, one database).
    """

    def __init__(self, runs: RunStore) -> None:
        self._runs = runs

    # Evals --------------------------------------------------------------------------------

    async def _add(self, row: Base, *, exists_ok: bool) -> bool:
        """Insert ``row``; with ``exists_ok`` a row of the same key is no error (False)."""
        try:
            async with self._runs._writing() as session:
                session.add(row)
        except IntegrityError:
            if not exists_ok:
                raise
            return False
        return True

    async def create_eval(self, stored: StoredEval, *, exists_ok: bool = False) -> bool:
        """Store a new eval; whether it was new (``exists_ok``: another replica's is kept)."""
        return await self._add(
            OpenAIEvalRow(
                id=stored.id,
                owner=stored.owner,
                name=stored.name,
                metadata_json=json.dumps(stored.metadata, ensure_ascii=False),
                data_source_config=json.dumps(stored.data_source_config, ensure_ascii=False),
                testing_criteria=json.dumps(stored.testing_criteria, ensure_ascii=False),
                created_at=stored.created_at,
                updated_at=stored.updated_at,
            ),
            exists_ok=exists_ok,
        )

    async def get_eval(self, eval_id: str, owner: str | None) -> StoredEval:
        """The eval, if ``owner`` may see it (every eval when authentication is off).

        Raises:
            NotFound: No such eval (or another owner's).
        """
        async with self._runs._session() as session:
            row = await session.get(OpenAIEvalRow, eval_id)
        if row is None or (owner is not None and row.owner != owner):
            raise NotFound(f"no eval has the id {eval_id!r}")
        return _eval(row)

    async def list_evals(
        self, owner: str | None, *, after: str | None, limit: int, order: str, order_by: str
    ) -> tuple[list[StoredEval], bool]:
        """One page of evals after the eval ``after``, and whether more follow."""
        column = OpenAIEvalRow.updated_at if order_by == "updated_at" else OpenAIEvalRow.created_at
        query = select(OpenAIEvalRow)
        if owner is not None:
            query = query.where(OpenAIEvalRow.owner == owner)
        if after is not None:
            anchor = await self.get_eval(after, owner)
            moment = anchor.updated_at if order_by == "updated_at" else anchor.created_at
            key = (column, OpenAIEvalRow.id)
            query = query.where(_beyond(key, (moment, anchor.id), order))
        query = _ordered(query, (column, OpenAIEvalRow.id), order).limit(limit + 1)
        async with self._runs._session() as session:
            rows = (await session.scalars(query)).all()
        items, more = _page(rows, limit)
        return [_eval(row) for row in items], more

    async def update_eval(
        self, eval_id: str, owner: str | None, *, name: str | None, metadata: dict[str, str] | None
    ) -> StoredEval:
        """Rename the eval and/or replace its metadata."""
        await self.get_eval(eval_id, owner)
        values: dict[str, Any] = {"updated_at": utc_now()}
        if name is not None:
            values["name"] = name
        if metadata is not None:
            values["metadata_json"] = json.dumps(metadata, ensure_ascii=False)
        async with self._runs._writing() as session:
            await session.execute(
                update(OpenAIEvalRow).where(OpenAIEvalRow.id == eval_id).values(**values)
            )
        return await self.get_eval(eval_id, owner)

    async def delete_eval(self, eval_id: str) -> None:
        """Remove the eval and its run rows (the caller removes the durable runs first)."""
        async with self._runs._writing() as session:
            await session.execute(
                delete(OpenAIEvalRunRow).where(OpenAIEvalRunRow.eval_id == eval_id)
            )
            await session.execute(delete(OpenAIEvalRow).where(OpenAIEvalRow.id == eval_id))

    # Eval runs ----------------------------------------------------------------------------

    async def add_eval_run(self, stored: StoredEvalRun, *, exists_ok: bool = False) -> bool:
        """Attach the durable run ``stored.id`` to its eval; whether it was not yet."""
        return await self._add(OpenAIEvalRunRow(**eval_run_values(stored)), exists_ok=exists_ok)

    async def get_eval_run(self, eval_id: str, run_id: str) -> StoredEvalRun:
        """The eval's run.

        Raises:
            NotFound: The eval has no run of that id.
        """
        async with self._runs._session() as session:
            row = await session.get(OpenAIEvalRunRow, run_id)
        if row is None or row.eval_id != eval_id:
            raise NotFound(f"eval {eval_id!r} has no run with the id {run_id!r}")
        return _eval_run(row)

    async def list_eval_runs(
        self, eval_id: str, *, statuses: Sequence[str], after: str | None, limit: int, order: str
    ) -> tuple[list[StoredEvalRun], bool]:
        """One page of the eval's runs (in any of ``statuses`` when given)."""
        query = select(OpenAIEvalRunRow).where(OpenAIEvalRunRow.eval_id == eval_id)
        if statuses:
            query = query.join(RunRow, RunRow.id == OpenAIEvalRunRow.id).where(
                RunRow.status.in_(statuses)
            )
        key = (OpenAIEvalRunRow.created_at, OpenAIEvalRunRow.id)
        if after is not None:
            anchor = await self.get_eval_run(eval_id, after)
            query = query.where(_beyond(key, (anchor.created_at, anchor.id), order))
        query = _ordered(query, key, order).limit(limit + 1)
        async with self._runs._session() as session:
            rows = (await session.scalars(query)).all()
        items, more = _page(rows, limit)
        return [_eval_run(row) for row in items], more

    async def eval_run_ids(self, eval_id: str) -> list[str]:
        """Every run id of the eval."""
        query = select(OpenAIEvalRunRow.id).where(OpenAIEvalRunRow.eval_id == eval_id)
        async with self._runs._session() as session:
            return list((await session.scalars(query)).all())

    # Output items -------------------------------------------------------------------------

    def _outputs(self, run_id: str) -> Select[int, str, str, datetime]:
        return (
            select(ResultRow.case_seq, CaseRow.definition, ResultRow.record, ResultRow.created_at)
            .join(
                CaseRow, (CaseRow.run_id == ResultRow.run_id) & (CaseRow.seq == ResultRow.case_seq)
            )
            .where(ResultRow.run_id == run_id)
        )

    async def output_items(
        self, run_id: str, *, statuses: Sequence[str], after: int | None, limit: int, order: str
    ) -> tuple[list[StoredOutput], bool]:
        """One page of the run's finished cases, by position."""
        query = self._outputs(run_id)
        if statuses:
            query = query.where(ResultRow.status.in_(statuses))
        if after is not None:
            beyond = ResultRow.case_seq < after if order == "desc" else ResultRow.case_seq > after
            query = query.where(beyond)
        seq = ResultRow.case_seq.desc() if order == "desc" else ResultRow.case_seq.asc()
        async with self._runs._session() as session:
            rows = (await session.execute(query.order_by(seq).limit(limit + 1))).all()
        items, more = _page(rows, limit)
        return [_output(row) for row in items], more

    async def output_item(self, run_id: str, seq: int) -> StoredOutput | None:
        """The finished case at position ``seq`` of the run, if any."""
        async with self._runs._session() as session:
            row = (
                await session.execute(self._outputs(run_id).where(ResultRow.case_seq == seq))
            ).first()
        return _output(row) if row is not None else None

    async def tally(self, run_id: str) -> RunTally:
        """What the run's object counts, from the results' columns: no record is read.

        The outcomes the run summary is built from (``result_facts``), and the requests and
        tokens per target (``results.target_usage``).
        """
        facts = await self._runs.result_facts(run_id)
        statuses: dict[str, int] = {}
        graders: dict[str, list[int]] = {}
        for status, _, column, times in facts.outcomes:
            statuses[status] = statuses.get(status, 0) + times
            for name, _, passed, _ in read_graders(column):
                if passed is not None:
                    graders.setdefault(name, [0, 0])[0 if passed else 1] += times
        return RunTally(
            statuses=statuses,
            graders={name: (passed, failed) for name, (passed, failed) in graders.items()},
            **await self._target_usage(run_id),
        )

    async def _target_usage(self, run_id: str) -> dict[str, Any]:
        """``RunTally.targets`` and ``unattributed``: one short column per result read."""
        by_role = select(
            func.coalesce(func.sum(ResultRow.candidate_calls), 0),
            func.coalesce(func.sum(ResultRow.candidate_input_tokens), 0),
            func.coalesce(func.sum(ResultRow.candidate_output_tokens), 0),
            func.coalesce(func.sum(ResultRow.judge_calls), 0),
            func.coalesce(func.sum(ResultRow.judge_input_tokens), 0),
            func.coalesce(func.sum(ResultRow.judge_output_tokens), 0),
        ).where(ResultRow.run_id == run_id, ResultRow.target_usage.is_(None))
        columns = select(ResultRow.target_usage).where(
            ResultRow.run_id == run_id, ResultRow.target_usage.is_not(None)
        )
        async with self._runs._session() as session:
            sums = [int(value) for value in (await session.execute(by_role)).one()]
            stored = (await session.scalars(columns)).all()
        targets: dict[str, tuple[int, int, int]] = {}
        for column in stored:
            for name, used in read_target_usage(column).items():
                known = targets.get(name, (0, 0, 0))
                targets[name] = (known[0] + used[0], known[1] + used[1], known[2] + used[2])
        unattributed = {
            role: (sums[offset], sums[offset + 1], sums[offset + 2])
            for role, offset in (("candidate", 0), ("judge", 3))
            if any(sums[offset : offset + 3])
        }
        return {"targets": targets, "unattributed": unattributed}

    # Files --------------------------------------------------------------------------------

    async def add_file(self, stored: StoredFile, *, exists_ok: bool = False) -> bool:
        """Store an uploaded file; whether it was new."""
        return await self._add(
            OpenAIFileRow(
                id=stored.id,
                owner=stored.owner,
                filename=stored.filename,
                purpose=stored.purpose,
                bytes=stored.bytes,
                content=stored.content,
                created_at=stored.created_at,
                rows=stored.rows,
            ),
            exists_ok=exists_ok,
        )

    async def list_files(
        self, owner: str | None, *, purpose: str | None, after: str | None, limit: int, order: str
    ) -> tuple[list[StoredFile], bool]:
        """One page of files (of ``purpose`` when given) after the file ``after``."""
        query = select(OpenAIFileRow)
        if owner is not None:
            query = query.where(OpenAIFileRow.owner == owner)
        if purpose is not None:
            query = query.where(OpenAIFileRow.purpose == purpose)
        key = (OpenAIFileRow.created_at, OpenAIFileRow.id)
        if after is not None:
            anchor = await self.get_file(after, owner)
            query = query.where(_beyond(key, (anchor.created_at, anchor.id), order))
        query = _ordered(query, key, order).limit(limit + 1)
        async with self._runs._session() as session:
            rows = (await session.scalars(query)).all()
        items, more = _page(rows, limit)
        return [_file(row) for row in items], more

    async def get_file(self, file_id: str, owner: str | None) -> StoredFile:
        """The file, if ``owner`` may see it.

        Raises:
            NotFound: No such file (or another owner's).
        """
        async with self._runs._session() as session:
            row = await session.get(OpenAIFileRow, file_id)
        if row is None or (owner is not None and row.owner != owner):
            raise NotFound(f"no file has the id {file_id!r}")
        return _file(row)

    async def delete_file(self, file_id: str) -> None:
        """Remove the file."""
        async with self._runs._writing() as session:
            await session.execute(delete(OpenAIFileRow).where(OpenAIFileRow.id == file_id))


def _file(row: OpenAIFileRow) -> StoredFile:
    return StoredFile(
        id=row.id,
        owner=row.owner,
        filename=row.filename,
        purpose=row.purpose,
        bytes=row.bytes,
        content=row.content,
        created_at=_moment(row.created_at),
        rows=row.rows,
    )


def eval_run_values(stored: StoredEvalRun) -> dict[str, Any]:
    """The ``openai_eval_runs`` row of an eval run, as column values."""
    imported = stored.imported
    return {
        "id": stored.id,
        "eval_id": stored.eval_id,
        "name": stored.name,
        "model": stored.model,
        "data_source": json.dumps(stored.data_source, ensure_ascii=False),
        "metadata_json": json.dumps(stored.metadata, ensure_ascii=False),
        "created_at": stored.created_at,
        "imported": json.dumps(imported, ensure_ascii=False) if imported is not None else None,
    }


def _output(row: Row[int, str, str, datetime]) -> StoredOutput:
    seq, definition, record, created_at = row
    return StoredOutput(seq, json.loads(definition), json.loads(record), _moment(created_at))


def _beyond(key: tuple[Any, Any], anchor: tuple[Any, Any], order: str) -> Any:
    (column, ident), (moment, anchor_id) = key, anchor
    if order == "desc":
        return (column < moment) | ((column == moment) & (ident < anchor_id))
    return (column > moment) | ((column == moment) & (ident > anchor_id))


def _ordered(query: Select[Any], key: tuple[Any, Any], order: str) -> Select[Any]:
    if order == "desc":
        return query.order_by(key[0].desc(), key[1].desc())
    return query.order_by(key[0].asc(), key[1].asc())
