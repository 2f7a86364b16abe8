"""Per-key limits: the request rate (429 with Retry-After) and runs in flight."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from app.api.middleware.ratelimit import RequestRateLimiter, ensure_run_capacity
from app.errors import TooManyRequests
from app.main import create_app
from app.runs.postgres.rate_buckets import PRUNE_EVERY_SECONDS, DatabaseRateBuckets
from app.settings import Settings
from tests.conftest import ClientFactory, started

KEY_A = "key-a-0123456789"
KEY_B = "key-b-9876543210"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_a_burst_of_the_rate_then_refills_evenly() -> None:
    clock = FakeClock()
    limiter = RequestRateLimiter(2, clock=clock)

    assert [limiter.take("a"), limiter.take("a")] == [0, 0]
    assert limiter.take("a") == pytest.approx(30.0)
    clock.now += 30
    assert limiter.take("a") == 0
    assert limiter.take("a") > 0


def test_keys_have_separate_buckets_and_zero_means_no_limit() -> None:
    limiter = RequestRateLimiter(1, clock=FakeClock())
    unlimited = RequestRateLimiter(0)

    assert limiter.take("a") == 0
    assert limiter.take("b") == 0
    assert limiter.take("a") > 0
    assert all(unlimited.take("a") == 0 for _ in range(1000))


def test_forgotten_keys_are_evicted_oldest_first() -> None:
    limiter = RequestRateLimiter(1, clock=FakeClock(), max_keys=2)
    for key in ("a", "b", "c"):
        limiter.take(key)

    assert limiter.take("a") == 0  # "a" was evicted, so it starts with a full bucket
    assert limiter.take("c") > 0


@pytest.fixture
async def limited(tmp_path: Path, make_client: ClientFactory) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        data_dir=tmp_path / "data", api_keys=[KEY_A, KEY_B], rate_limit_per_minute=2
    )
    async with make_client(settings) as http:
        yield http


async def test_over_the_rate_a_key_gets_a_429_problem_with_retry_after(
    limited: httpx.AsyncClient,
) -> None:
    headers = {"Authorization": f"Bearer {KEY_A}"}
    statuses = [(await limited.get("/targets", headers=headers)).status_code for _ in range(3)]
    refused = await limited.get("/targets", headers=headers)

    assert statuses == [200, 200, 429]
    assert refused.status_code == 429
    assert refused.headers["content-type"] == "application/problem+json"
    assert 1 <= int(refused.headers["retry-after"]) <= 30
    problem = refused.json()
    assert problem["title"] == "Request rate limit exceeded"
    assert problem["type"] == "/problems/too-many-requests"


async def test_another_key_and_public_routes_are_not_held_back(
    limited: httpx.AsyncClient,
) -> None:
    for _ in range(3):
        await limited.get("/targets", headers={"Authorization": f"Bearer {KEY_A}"})

    other = await limited.get("/targets", headers={"Authorization": f"Bearer {KEY_B}"})
    health = [(await limited.get("/healthz")).status_code for _ in range(5)]

    assert other.status_code == 200
    assert health == [200] * 5


@pytest.mark.parametrize(
    ("limit", "in_flight", "refused"),
    [(0, 10_000, False), (3, 2, False), (3, 3, True), (1, 5, True)],
)
def test_run_capacity_refuses_at_the_per_key_limit(
    limit: int, in_flight: int, refused: bool
) -> None:
    settings = Settings(max_runs_in_flight_per_key=limit)
    caller = SimpleNamespace(id="0123456789abcdef")

    if not refused:
        ensure_run_capacity(caller, in_flight, settings)
        return
    with pytest.raises(TooManyRequests) as raised:
        ensure_run_capacity(caller, in_flight, settings)
    assert raised.value.title == "Too many runs in flight"
    assert int(raised.value.headers["Retry-After"]) > 0


async def test_replicas_on_one_postgresql_share_a_keys_rate(
    tmp_path: Path, database_url: str
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        api_keys=[KEY_A, KEY_B],
        rate_limit_per_minute=3,
        sample_run=False,
    )
    first, second = create_app(settings), create_app(settings)
    statuses = []
    async with started(first), started(second):
        clients = [
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://replica")
            for app in (first, second)
        ]
        for turn in range(4):  # the balancer sends the key's requests to each in turn
            response = await clients[turn % 2].get(
                "/targets", headers={"Authorization": f"Bearer {KEY_A}"}
            )
            statuses.append(response.status_code)
        other = await clients[1].get("/targets", headers={"Authorization": f"Bearer {KEY_B}"})
        for client in clients:
            await client.aclose()

    if database_url.startswith("sqlite"):
        assert statuses == [200, 200, 200, 200]  # one process's buckets: each replica its own
    else:
        assert statuses == [200, 200, 200, 429]  # three a minute across the fleet
        assert 1 <= int(response.headers["retry-after"]) <= 20
    assert other.status_code == 200


class BrokenBuckets:
    async def take(self, key: str, capacity: float, refill_per_second: float) -> float:
        raise ConnectionRefusedError("the database is down")


async def test_when_the_shared_buckets_fail_the_processs_own_stand_in() -> None:
    limiter = RequestRateLimiter(1, clock=FakeClock())
    limiter.share(BrokenBuckets())

    await limiter.check("a")
    with pytest.raises(TooManyRequests):
        await limiter.check("a")


async def test_buckets_idle_until_full_again_are_deleted_once_a_minute(
    tmp_path: Path, database_url: str
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("buckets are database rows on PostgreSQL only")
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url, sample_run=False)
    engine = create_async_engine(database_url)
    clock = FakeClock()
    buckets = DatabaseRateBuckets(engine, clock=clock)
    per_second = 3 / 60  # 3 a minute: an empty bucket is full again after 60 s

    async def keys() -> set[str]:
        async with engine.connect() as connection:
            rows = await connection.exec_driver_sql("SELECT key FROM rate_buckets")
            return {row.key for row in rows}

    async with started(create_app(settings)):  # the tables
        for key in ("idle", "full", "recent"):
            await buckets.take(key, 3, per_second)
        async with engine.begin() as connection:
            await connection.exec_driver_sql(
                "UPDATE rate_buckets SET updated = now() - interval '61 seconds' "
                "WHERE key IN ('idle', 'full')"
            )
        await buckets.take("full", 3, per_second)  # used again: stays
        before = await keys()
        clock.now += PRUNE_EVERY_SECONDS
        await buckets.take("recent", 3, per_second)
        after = await keys()
    await engine.dispose()
    assert before == {"idle", "full", "recent"}  # not before a minute has passed
    assert after == {"full", "recent"}
