"""The start-up heap is frozen once per process, when the service has started."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from asgi_lifespan import LifespanManager

from app import heap
from app.main import create_app
from app.settings import Settings


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Calls of ``gc.freeze`` from here on, as the number of objects tracked at each one."""
    calls: list[int] = []
    monkeypatch.setattr(heap, "_frozen", False)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(len(gc.get_objects())))
    return calls


def test_the_heap_is_frozen_once_per_process(freezes: list[int]) -> None:
    heap.freeze_startup_heap()
    heap.freeze_startup_heap()
    assert len(freezes) == 1


async def test_the_service_freezes_its_heap_when_it_has_started(
    freezes: list[int], tmp_path: Path
) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    assert freezes == []
    async with LifespanManager(app):
        assert len(freezes) == 1
    second = create_app(Settings(data_dir=tmp_path / "again"))
    async with LifespanManager(second):
        assert len(freezes) == 1  # a second app in the same process freezes nothing more


async def test_a_service_shut_down_is_freed(tmp_path: Path) -> None:
    # FastAPI keeps what it learns of each endpoint in a process-wide cache: endpoints made per
    # app (closures over it) kept every app built alive, so the test process grew past 1.5 GB
    # and each full collection over it took seconds (a template test: a minute).
    heap.freeze_startup_heap()  # what the process holds already, not this app
    app = create_app(Settings(data_dir=tmp_path, sample_run=False))
    async with LifespanManager(app):
        pass
    gone = weakref.ref(app)
    del app
    gc.collect()
    assert gone() is None
