"""Run tags in the store, on SQLite and PostgreSQL: stored with a run, replaced, found, deleted."""

from __future__ import annotations

import pytest

from app.errors import RunNotFound
from app.runs.storage.store import RunStore
from tests.runs.builders import make_cases, make_new_run


async def test_tags_are_stored_with_the_run_replaced_and_found(store: RunStore) -> None:
    first, _ = await store.create_run(make_new_run(tags=("main", "nightly"), name="a"), [])
    second, _ = await store.create_run(make_new_run(tags=("main",), name="b"), make_cases(2))
    plain, _ = await store.create_run(make_new_run(name="a"), [])

    async def found(**filters: str) -> list[str]:
        page = await store.list_runs(status=None, limit=10, cursor=None, **filters)
        return [run.id for run in page.items]

    assert await store.tags_of([first.id, second.id, plain.id]) == {
        first.id: ["main", "nightly"],
        second.id: ["main"],
    }
    assert await found(tag="main") == [second.id, first.id]
    assert await found(tag="main", name="a") == [first.id]
    await store.set_tags(first.id, ["release-2.1"])
    assert await found(tag="main") == [second.id]
    assert await store.tags_of([first.id]) == {first.id: ["release-2.1"]}
    with pytest.raises(RunNotFound):
        await store.set_tags("run_nope", ["main"])


async def test_a_deleted_runs_tags_go_with_it(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(tags=("main",)), make_cases(1))
    await store.finish_run(run.id, "cancelled", {})
    await store.delete_run(run.id)
    assert await store.tags_of([run.id]) == {}
    again, _ = await store.create_run(make_new_run(run.id, tags=("main",)), [])
    assert await store.tags_of([again.id]) == {again.id: ["main"]}
