"""``time_limit``: asyncio.timeout's behaviour, on one shared loop timer, on both loops."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from app.time_limits import _TIMERS, time_limit

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop] | None] = {
    "asyncio": None,
    "uvloop": uvloop.new_event_loop,
}


@pytest.fixture(params=sorted(LOOPS))
def run(request: pytest.FixtureRequest) -> Callable[[Coroutine[Any, Any, Any]], Any]:
    """Run a coroutine to completion on a fresh loop of each kind."""

    def runner(coroutine: Coroutine[Any, Any, Any]) -> Any:
        with asyncio.Runner(loop_factory=LOOPS[request.param]) as loop_runner:
            return loop_runner.run(coroutine)

    return runner


def test_a_block_past_its_limit_raises_timeout_error_and_says_it_expired(run: Any) -> None:
    async def scenario() -> tuple[float, bool]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        limit = time_limit(0.05)
        with pytest.raises(TimeoutError):
            async with limit:
                await asyncio.sleep(5)
        return loop.time() - started, limit.expired()

    elapsed, expired = run(scenario())
    assert 0.04 <= elapsed < 1.0
    assert expired


def test_a_block_within_its_limit_leaves_its_task_uncancelled(run: Any) -> None:
    async def scenario() -> tuple[str, bool, int]:
        limit = time_limit(0.2)
        async with limit:
            await asyncio.sleep(0.01)
            value = "done"
        await asyncio.sleep(0.3)  # past the limit: nothing fires later
        task = asyncio.current_task()
        assert task is not None
        return value, limit.expired(), task.cancelling()

    assert run(scenario()) == ("done", False, 0)


def test_no_limit_never_fires(run: Any) -> None:
    async def scenario() -> bool:
        limit = time_limit(None)
        async with limit:
            await asyncio.sleep(0.05)
        return limit.expired()

    assert run(scenario()) is False


def test_a_limit_already_past_fires_at_the_first_wait(run: Any) -> None:
    async def scenario() -> bool:
        limit = time_limit(0)
        with pytest.raises(TimeoutError):
            async with limit:
                await asyncio.sleep(1)
        return limit.expired()

    assert run(scenario())


def test_an_inner_limit_fires_without_ending_the_outer_one(run: Any) -> None:
    async def scenario() -> tuple[bool, bool]:
        outer, inner = time_limit(5), time_limit(0.02)
        async with outer:
            with pytest.raises(TimeoutError):
                async with inner:
                    await asyncio.sleep(1)
            await asyncio.sleep(0.01)
        return outer.expired(), inner.expired()

    assert run(scenario()) == (False, True)


def test_an_outer_limit_firing_inside_an_inner_one_is_the_outer_ones_timeout(run: Any) -> None:
    async def scenario() -> tuple[bool, bool]:
        outer, inner = time_limit(0.02), time_limit(5)
        with pytest.raises(TimeoutError):
            async with outer, inner:
                await asyncio.sleep(1)
        return outer.expired(), inner.expired()

    assert run(scenario()) == (True, False)


def test_a_cancellation_from_elsewhere_passes_through_unchanged(run: Any) -> None:
    async def scenario() -> bool:
        limit = time_limit(5)

        async def inside() -> None:
            async with limit:
                await asyncio.sleep(1)

        task = asyncio.create_task(inside())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return limit.expired()

    assert run(scenario()) is False


def test_a_shorter_limit_entered_after_a_longer_one_fires_on_time(run: Any) -> None:
    async def scenario() -> float:
        loop = asyncio.get_running_loop()

        async def long_wait() -> None:
            async with time_limit(30):
                await asyncio.sleep(0.5)

        waiting = asyncio.create_task(long_wait())
        await asyncio.sleep(0)
        started = loop.time()
        with pytest.raises(TimeoutError):
            async with time_limit(0.05):
                await asyncio.sleep(5)
        elapsed = loop.time() - started
        await waiting
        return elapsed

    assert 0.04 <= run(scenario()) < 0.4


def test_many_limits_fire_each_in_its_own_task(run: Any) -> None:
    async def scenario() -> list[str]:
        async def one(seconds: float | None, sleep: float) -> str:
            try:
                async with time_limit(seconds):
                    await asyncio.sleep(sleep)
            except TimeoutError:
                return "timed out"
            return "done"

        plans: list[tuple[float | None, float]] = [
            (0.05, 1.0),
            (1.0, 0.01),
            (0.02, 1.0),
            (None, 0.03),
            (2.0, 0.06),
        ]
        return list(await asyncio.gather(*(one(s, t) for s, t in plans)))

    assert run(scenario()) == ["timed out", "done", "timed out", "done", "done"]


def test_limits_left_before_they_end_do_not_pile_up(run: Any) -> None:
    async def scenario() -> int:
        for _ in range(10_000):
            async with time_limit(600):
                pass
        return len(_TIMERS[asyncio.get_running_loop()]._heap)

    assert run(scenario()) <= 200


def test_a_limit_is_entered_once(run: Any) -> None:
    async def scenario() -> None:
        limit = time_limit(1)
        async with limit:
            pass
        with pytest.raises(RuntimeError, match="entered once"):
            async with limit:
                pass

    run(scenario())


def test_another_error_leaving_a_fired_limit_passes_through(run: Any) -> None:
    async def scenario() -> bool:
        limit = time_limit(0.01)

        async def failing_cleanup() -> None:
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                raise ValueError("cleanup failed") from None

        with pytest.raises(ValueError, match="cleanup failed"):
            async with limit:
                await failing_cleanup()
        return limit.expired()

    assert run(scenario())


@pytest.mark.parametrize("kind", sorted(LOOPS))
def test_a_closed_loop_is_freed_with_its_timer(kind: str) -> None:
    async def scenario() -> None:
        with pytest.raises(TimeoutError):
            async with time_limit(0.01):
                await asyncio.sleep(1)
        async with time_limit(600):  # a left limit that stays on the heap, its timer armed
            await asyncio.sleep(0)

    factory = LOOPS[kind] or asyncio.new_event_loop
    loop = factory()
    loop.run_until_complete(scenario())
    loop.close()
    freed = weakref.ref(loop)
    del loop
    gc.collect()
    assert freed() is None
