"""/readyz: 200 when the database and targets are ready, else a 503 problem naming why."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import create_async_engine

from app.main import create_app
from app.runs.storage.store import RunStore
from app.settings import Settings


class HealthyStore:
    async def check_schema(self) -> None:
        return None


class UnmigratedStore:
    async def check_schema(self) -> None:
        raise RuntimeError("schema is at revision None, expected 0001")


def use_store(app: FastAPI, store: object) -> None:
    app.state.services = dataclasses.replace(app.state.services, store=store)


async def test_readyz_is_200_when_every_check_passes(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    use_store(app, HealthyStore())

    response = await client.get("/readyz")

    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "targets": "ok"}}


async def test_readyz_is_a_503_problem_when_the_database_check_fails(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    use_store(app, UnmigratedStore())

    response = await client.get("/readyz")

    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["title"] == "Service not ready"
    assert problem["checks"]["database"] == "failed: RuntimeError"
    assert "database" in problem["detail"]


async def test_readyz_is_503_before_start_up_has_built_the_services(tmp_path: Path) -> None:
    application = create_app(Settings(data_dir=tmp_path / "data"))
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        response = await http.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"] == {"startup": "in progress"}


async def test_healthz_stays_200_whatever_readiness_says(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    use_store(app, UnmigratedStore())

    assert (await client.get("/healthz")).status_code == 200


async def test_readyz_checks_the_real_store_schema_is_migrated(client: httpx.AsyncClient) -> None:
    response = await client.get("/readyz")

    assert response.status_code == 200
    assert response.json()["checks"]["database"] == "ok"


async def test_readyz_reports_pending_migrations_of_an_unmigrated_database(
    app: FastAPI, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}")
    use_store(app, RunStore(engine))
    try:
        response = await client.get("/readyz")
    finally:
        await engine.dispose()

    assert response.status_code == 503
    assert response.json()["checks"]["database"].startswith("migrations pending: schema at none")


async def test_readyz_reports_an_unreachable_database(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    engine = create_async_engine("postgresql+asyncpg://eval:eval@127.0.0.1:9/eval")
    use_store(app, RunStore(engine))
    try:
        response = await client.get("/readyz")
    finally:
        await engine.dispose()

    assert response.status_code == 503
    assert response.json()["checks"]["database"].startswith("failed: ")


async def test_readyz_is_a_503_naming_each_database_link_that_is_down(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    use_store(app, HealthyStore())
    links = app.state.services.links
    links.up("case_queue")
    links.down("fleet_listener", ConnectionRefusedError())

    response = await client.get("/readyz")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["case_queue"] == "ok"
    assert checks["fleet_listener"].startswith("down for ")
    assert checks["fleet_listener"].endswith(": ConnectionRefusedError, reconnecting")
    assert "fleet_listener" in response.json()["detail"]
    links.up("fleet_listener")
    assert (await client.get("/readyz")).status_code == 200  # ready again once it is back
