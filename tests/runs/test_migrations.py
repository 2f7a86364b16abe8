"""The Alembic migrations build exactly the schema the table models describe."""

from __future__ import annotations

from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection

from app.evaluation.records import RoleAttempts, RoleCost
from app.runs.database import alembic_config
from app.runs.storage.store import RunStore
from app.runs.tables import Base
from tests.runs.builders import make_cases, make_new_run, make_record


def _ours(name: str | None, kind: str, _parents: Any) -> bool:
    """Leave out pgqueuer's tables: its own install script owns them (the same migration)."""
    return not (kind == "table" and (name or "").startswith("pgqueuer"))


def _differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"include_name": _ours})
    return list(compare_metadata(context, Base.metadata))


async def test_migrated_schema_matches_the_table_models(store: RunStore) -> None:
    async with store.engine.connect() as connection:
        assert await connection.run_sync(_differences) == []


def _down_and_up(connection: Connection, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.downgrade(config, revision)
    command.upgrade(config, "head")


async def test_calls_and_costs_are_filled_in_for_results_stored_before_their_columns(
    store: RunStore,
) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(2))
    attempts = RoleAttempts(candidate=2, judge=3)
    cost = RoleCost(candidate=0.25, judge=0.05)
    record = make_record("case-0").model_copy(update={"attempts": attempts, "cost_usd": cost})
    assert await store.record_result(run.id, 0, record)
    with_nul = make_record("case-1").model_copy(update={"candidate_answer": "a\x00b"})
    assert await store.record_result(run.id, 1, with_nul)  # JSON's \u0000 in the record
    async with store.engine.begin() as connection:  # back to before 0007, and up again
        await connection.run_sync(_down_and_up, "0006")
    facts = await store.result_facts(run.id)
    assert (facts.candidate_calls, facts.judge_calls) == (2, 3)
    assert await store.run_spending(run.id) == pytest.approx(0.3)  # 0009 filled in the costs


async def test_names_are_filled_in_for_runs_stored_before_their_column(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(1))  # spec's dataset: demo
    async with store.engine.begin() as connection:  # back to before 0011, and up again
        await connection.run_sync(_down_and_up, "0010")
    after = await store.get_run(run.id)
    assert after.name == "demo"
    assert after.total == 1
    assert await store.load_spec(run.id)  # the run row kept whole (no table copy)
