"""Tags on runs (``run_tags``): set with a run, replaced by a person or CI, read in bulk.

Runs are found by tag through ``RunStore.list_runs(tag=...)``; a run's tags go with it when
it is deleted (the foreign key cascades, and ``delete_run`` removes them too).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import RunNotFound
from app.runs.storage.store_base import StoreBase
from app.runs.tables import RunRow, RunTagRow


async def insert_tags(session: AsyncSession, run_id: str, tags: Sequence[str]) -> None:
    """Give ``run_id`` the ``tags`` (distinct), inside the caller's transaction."""
    distinct = sorted(set(tags))
    if distinct:
        await session.execute(insert(RunTagRow), [{"run_id": run_id, "tag": t} for t in distinct])


class TagsStore(StoreBase):
    """The ``run_tags`` table."""

    async def set_tags(self, run_id: str, tags: Sequence[str]) -> None:
        """Replace the run's tags with ``tags``; raises ``RunNotFound``."""
        async with self._writing() as session:
            if await session.get(RunRow, run_id) is None:
                raise RunNotFound(f"no run has the id {run_id!r}")
            await session.execute(delete(RunTagRow).where(RunTagRow.run_id == run_id))
            await insert_tags(session, run_id, tags)

    async def tags_of(self, run_ids: Sequence[str]) -> dict[str, list[str]]:
        """Each run's tags, sorted (runs without any are left out)."""
        if not run_ids:
            return {}
        query = (
            select(RunTagRow.run_id, RunTagRow.tag)
            .where(RunTagRow.run_id.in_(run_ids))
            .order_by(RunTagRow.run_id, RunTagRow.tag)
        )
        async with self._session() as session:
            rows = (await session.execute(query)).all()
        tags: dict[str, list[str]] = {}
        for run_id, tag in rows:
            tags.setdefault(run_id, []).append(tag)
        return tags
