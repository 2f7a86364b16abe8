"""The Alembic migrations build exactly the schema the table models describe."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection

from app.runs.store import RunStore
from app.runs.tables import Base


def _ours(name: str | None, kind: str, _parents: Any) -> bool:
    """Leave out pgqueuer's tables: its own install script owns them (the same migration)."""
    return not (kind == "table" and (name or "").startswith("pgqueuer"))


def _differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"include_name": _ours})
    return list(compare_metadata(context, Base.metadata))


async def test_migrated_schema_matches_the_table_models(store: RunStore) -> None:
    async with store.engine.connect() as connection:
        assert await connection.run_sync(_differences) == []
