"""Runs imported from another Evals API: read-only historical runs, items served verbatim.

An imported run is a finished durable run with no cases (so nothing ever executes it), an
eval run row whose ``imported`` column holds the source's run object, and the source's
output items in ``openai_imported_items`` (position, id, status, body). Items are added in
batches, each batch one transaction, in the source's order: a copy cut short holds a prefix
of them, and ``item_count`` says where to resume.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from app.runs.openai_evals.openai_store import StoredEvalRun, eval_run_values
from app.runs.storage.store import RunStore
from app.runs.tables import OpenAIEvalRunRow, OpenAIImportedItemRow, RunRow

FINAL_STATUSES = {"completed": "completed", "failed": "failed", "canceled": "cancelled"}
"""The source's final run status -> the durable run's."""


class OpenAIImportStore:
    """Writes and reads imported runs through the run store's sessions."""

    def __init__(self, runs: RunStore) -> None:
        self._runs = runs

    async def add_run(self, stored: StoredEvalRun, owner: str | None, spec: str) -> bool:
        """Store the finished run and its eval run row; False when the id already exists."""
        source = stored.imported or {}
        status = FINAL_STATUSES[str(source["status"])]
        error = source.get("error") or None
        try:
            async with self._runs._writing() as session:
                await session.execute(
                    insert(RunRow).values(
                        id=stored.id,
                        kind="evaluate",
                        status=status,
                        owner=owner,
                        target=stored.model or "imported",
                        judge_target=None,
                        name=stored.name,
                        spec=spec,
                        total=0,
                        done=0,
                        event_seq=0,
                        cancel_requested=False,
                        error=str(error.get("message"))[:2000] if isinstance(error, dict) else None,
                        created_at=stored.created_at,
                        started_at=stored.created_at,
                        finished_at=stored.created_at,
                    )
                )
                await session.execute(insert(OpenAIEvalRunRow).values(**eval_run_values(stored)))
        except IntegrityError:
            return False
        return True

    async def item_count(self, run_id: str) -> int:
        """How many items of the run are stored."""
        query = select(func.count()).where(OpenAIImportedItemRow.run_id == run_id)
        async with self._runs._session() as session:
            return int(await session.scalar(query) or 0)

    async def add_items(self, run_id: str, start: int, items: Sequence[dict[str, Any]]) -> int:
        """Store ``items`` at positions ``start``...; those already stored are skipped."""
        async with self._runs._writing() as session:
            known = set(
                (
                    await session.scalars(
                        select(OpenAIImportedItemRow.item_id).where(
                            OpenAIImportedItemRow.run_id == run_id,
                            OpenAIImportedItemRow.item_id.in_([str(i["id"]) for i in items]),
                        )
                    )
                ).all()
            )
            count = await session.scalar(
                select(func.count()).where(OpenAIImportedItemRow.run_id == run_id)
            )
            seq = max(start, int(count or 0))
            rows = []
            for item in items:
                if str(item["id"]) in known:
                    continue
                rows.append(
                    {
                        "run_id": run_id,
                        "seq": seq,
                        "item_id": str(item["id"]),
                        "status": str(item.get("status") or ""),
                        "body": json.dumps(item, ensure_ascii=False),
                    }
                )
                seq += 1
            if rows:
                await session.execute(insert(OpenAIImportedItemRow), rows)
        return len(rows)

    async def items(
        self, run_id: str, *, status: str | None, after: str | None, limit: int, order: str
    ) -> tuple[list[dict[str, Any]], bool]:
        """One page of the run's items, by position (``after``: an item id)."""
        query = select(OpenAIImportedItemRow).where(OpenAIImportedItemRow.run_id == run_id)
        if status is not None:
            query = query.where(OpenAIImportedItemRow.status == status)
        async with self._runs._session() as session:
            if after is not None:
                anchor = await self._item_row(session, run_id, after)
                if anchor is not None:
                    column = OpenAIImportedItemRow.seq
                    query = query.where(
                        column < anchor.seq if order == "desc" else column > anchor.seq
                    )
            ordering = (
                OpenAIImportedItemRow.seq.desc() if order == "desc" else OpenAIImportedItemRow.seq
            )
            rows = (await session.scalars(query.order_by(ordering).limit(limit + 1))).all()
        return [json.loads(row.body) for row in rows[:limit]], len(rows) > limit

    async def item(self, run_id: str, item_id: str) -> dict[str, Any] | None:
        """The run's item of that id, if any."""
        async with self._runs._session() as session:
            row = await self._item_row(session, run_id, item_id)
        return json.loads(row.body) if row is not None else None

    @staticmethod
    async def _item_row(session: Any, run_id: str, item_id: str) -> OpenAIImportedItemRow | None:
        query = select(OpenAIImportedItemRow).where(
            OpenAIImportedItemRow.run_id == run_id, OpenAIImportedItemRow.item_id == item_id
        )
        row: OpenAIImportedItemRow | None = (await session.scalars(query)).first()
        return row


def created_at(source: dict[str, Any]) -> datetime:
    """The source object's ``created_at`` (Unix seconds) as a UTC time (0 if not one)."""
    value = source.get("created_at")
    seconds = value if isinstance(value, int) and 0 <= value < 2**33 else 0
    return datetime.fromtimestamp(seconds, UTC)
