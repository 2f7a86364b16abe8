"""The ``/v1`` sample eval, run and file a fresh server creates, so every example runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.main import create_app
from app.schemas.openai_examples import (
    SAMPLE_EVAL_ID,
    SAMPLE_EVAL_RUN_ID,
    SAMPLE_FILE_CONTENT,
    SAMPLE_FILE_ID,
)
from app.services.container import Services
from app.settings import Settings
from tests.conftest import ClientFactory, started, wait_for_run
from tests.runs.conftest import POSTGRES_URL_VARIABLE, _reset_postgres, postgres_url

pytestmark = pytest.mark.usefixtures("sample_runs")  # a fresh server's sample runs
RUN_PATH = f"/v1/evals/{SAMPLE_EVAL_ID}/runs/{SAMPLE_EVAL_RUN_ID}"


async def test_a_fresh_server_has_the_sample_eval_run_and_file(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        await wait_for_run(client, SAMPLE_EVAL_RUN_ID, "completed")
        run = (await client.get(RUN_PATH)).json()
        failed = (await client.get(f"{RUN_PATH}/output_items?status=fail")).json()["data"]
        content = (await client.get(f"/v1/files/{SAMPLE_FILE_ID}/content")).text

    assert run["status"] == "completed"
    assert run["per_model_usage"] == []  # a jsonl run: the answers are given
    assert (run["result_counts"]["passed"], run["result_counts"]["failed"]) == (1, 1)
    assert [item["datasource_item"]["answer"] for item in failed] == ["Jupiter"]
    assert content == SAMPLE_FILE_CONTENT


async def test_a_deleted_sample_eval_comes_back_at_the_next_start(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    async with make_client(settings) as client:
        await wait_for_run(client, SAMPLE_EVAL_RUN_ID, "completed")
        assert (await client.delete(f"/v1/evals/{SAMPLE_EVAL_ID}")).status_code == 200
        assert (await client.get(RUN_PATH)).status_code == 404
    async with make_client(settings) as client:
        await wait_for_run(client, SAMPLE_EVAL_RUN_ID, "completed")
        again = (await client.get(RUN_PATH)).json()
        evals = (await client.get("/v1/evals")).json()["data"]

    assert again["result_counts"]["total"] == 2
    assert [e["id"] for e in evals] == [SAMPLE_EVAL_ID]


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_two_replicas_creating_the_sample_together_make_one_of_each(
    tmp_path: Path, backend: str
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    if backend == "postgres":
        url = postgres_url() or ""
        if not url:
            pytest.skip(f"PostgreSQL tests need {POSTGRES_URL_VARIABLE}")
        await _reset_postgres(url)
    settings = Settings(data_dir=tmp_path / "data", database_url=url, sample_run=False)
    first, second = create_app(settings), create_app(settings)
    async with started(first), started(second):
        replicas: list[Services] = [first.state.services, second.state.services]
        await asyncio.gather(*(s.openai_evals.ensure_sample() for s in replicas * 2))
        service = replicas[1].openai_evals
        evals = await service.list_evals(
            None, after=None, limit=10, order="asc", order_by="created_at"
        )
        runs = await service.list_runs(
            SAMPLE_EVAL_ID, None, status=None, after=None, limit=10, order="asc", base_url="/"
        )
        file = await service.files.get(SAMPLE_FILE_ID, None)
        listed = await replicas[0].runs.list(status=None, limit=None, cursor=None)

    assert [e.id for e in evals.data] == [SAMPLE_EVAL_ID]
    assert [r.id for r in runs.data] == [SAMPLE_EVAL_RUN_ID]
    assert [r.id for r in listed.runs] == [SAMPLE_EVAL_RUN_ID]
    assert file.bytes == len(SAMPLE_FILE_CONTENT.encode())
