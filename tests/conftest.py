"""Shared fixtures: settings on a temporary data folder, the app, clients, the fake LLM server."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine

from app.evaluators.offload import cpu_process
from app.main import create_app
from app.runs import database
from app.runs.storage import store
from app.settings import Settings
from testkit.fake_llm import FakeLLM, FakeLLMs, serve_fake_llms
from testkit.openai_spec import SPEC_VARIABLE, SpecValidator, load_spec, spec_path
from tests.runs.conftest import POSTGRES_URL_VARIABLE, _reset_postgres, postgres_url


class ClientFactory(Protocol):
    """Opens an in-process client on an app started for ``settings`` (or on a built app)."""

    def __call__(
        self, app: Settings | FastAPI, *, raise_app_exceptions: bool = True
    ) -> AbstractAsyncContextManager[httpx.AsyncClient]: ...


LIFESPAN_SECONDS = 60.0
"""How long an app may take to start or stop in tests. Startup migrates a fresh database: under
a second here, but on CI's loaded machine a start or stop once took over asgi_lifespan's 5 s."""


def started(app: FastAPI) -> LifespanManager:
    """Run the app's lifespan (``async with started(app):``) with the tests' allowance."""
    return LifespanManager(app, startup_timeout=LIFESPAN_SECONDS, shutdown_timeout=LIFESPAN_SECONDS)


@asynccontextmanager
async def _open_client(
    app: Settings | FastAPI, *, raise_app_exceptions: bool = True
) -> AsyncIterator[httpx.AsyncClient]:
    application = create_app(app) if isinstance(app, Settings) else app
    async with started(application):
        transport = httpx.ASGITransport(app=application, raise_app_exceptions=raise_app_exceptions)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield http


@pytest.fixture(scope="session", autouse=True)
def _cpu_processes() -> Iterator[None]:
    """The service's CPU processes, held for the session: each app built finds them running
    (rather than starting and stopping two processes per app), and they stop at its end."""
    with cpu_process.hold():
        yield


SAMPLE_RUN_VARIABLE = "EVAL_SAMPLE_RUN"


@pytest.fixture(scope="session", autouse=True)
def _no_sample_runs() -> Iterator[None]:
    """Apps the tests build make no sample run unless the test asks for one (``sample_run``).

    A fresh server creates and runs two sample runs (one on a slow mock arm) as it starts:
    0.25-0.35 s of each app start's time, for hundreds of apps that never look at them.
    Tests that look at them ask for them (the ``sample_runs`` fixture); servers in processes
    of their own get only the environment the test gives them.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SAMPLE_RUN_VARIABLE, "false")
        yield


@pytest.fixture
def sample_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apps built in this test make their sample runs, as a fresh server does."""
    monkeypatch.delenv(SAMPLE_RUN_VARIABLE)


@pytest.fixture(scope="session", autouse=True)
def _migrated_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A new SQLite database starts as a copy of one migrated once for the session.

    Every app a test starts (and every store) opens a fresh database, and Alembic's 19
    migrations took 0.1 s of CPU each time. The copy is a database those same migrations built;
    ``migrate`` still runs on it (finding it current), on PostgreSQL, in the server processes
    the end-to-end tests start, and wherever a test calls Alembic itself.
    """
    template = tmp_path_factory.mktemp("migrated") / "eval.db"
    real_migrate = database.migrate

    async def build() -> None:
        engine = database.create_engine(f"sqlite+aiosqlite:///{template}")
        try:
            await real_migrate(engine)
        finally:
            await engine.dispose()  # the last connection folds the write-ahead log in

    asyncio.run(build())

    def copy_to(path: Path) -> None:
        if not path.exists():
            shutil.copyfile(template, path)

    async def migrate_from_template(engine: AsyncEngine) -> None:
        path = engine.url.database
        if engine.dialect.name == "sqlite" and path and path != ":memory:":
            await asyncio.to_thread(copy_to, Path(path))
        await real_migrate(engine)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "migrate", migrate_from_template)
        yield


@pytest.fixture
def make_client() -> ClientFactory:
    """``async with make_client(settings) as client``: the one way tests start the app."""
    return _open_client


@pytest.fixture(scope="session")
def _fake_llms() -> Iterator[FakeLLMs]:
    """One fake LLM server for the session (``fake_llm`` gives each test a fresh fake on it)."""
    with serve_fake_llms() as fakes:
        yield fakes


@pytest.fixture
def fake_llm(_fake_llms: FakeLLMs) -> Iterator[FakeLLM]:
    """A fresh fake LLM on 127.0.0.1 for one test (the session's server, its own state)."""
    with _fake_llms.serving() as fake:
        yield fake


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A fresh database: a SQLite file, or the test PostgreSQL emptied."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'eval.db'}"
        return
    url = postgres_url()
    if url is None:
        pytest.skip(f"PostgreSQL tests need {POSTGRES_URL_VARIABLE}")
    await _reset_postgres(url)
    yield url


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    application = create_app(settings)
    async with started(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


async def wait_for_run(client: httpx.AsyncClient, run_id: str, *statuses: str) -> dict[str, Any]:
    """Poll ``GET /runs/{run_id}`` until the run is in one of ``statuses`` (default: finished)."""
    wanted = statuses or ("completed", "cancelled", "failed")
    async with asyncio.timeout(20):
        while True:
            run: dict[str, Any] = (await client.get(f"/runs/{run_id}")).json()
            if run["status"] in wanted:
                return run
            await asyncio.sleep(0.02)


@pytest.fixture
def spec_validator() -> Iterator[SpecValidator]:
    """Validates ``/v1`` responses against OpenAI's OpenAPI description (read in place);
    any violation fails the test at teardown. Skips, naming the path, without the file."""
    path = spec_path()
    if not path.is_file():
        pytest.skip(f"OpenAI's OpenAPI description is not at {path} (set {SPEC_VARIABLE})")
    validator = SpecValidator(load_spec(path))
    yield validator
    assert validator.violations == [], "\n".join(validator.violations[:50])
