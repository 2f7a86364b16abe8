"""The sample run: created once on the mock target so that every /docs example has a run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from app.main import create_app
from app.schemas.openai_examples import SAMPLE_EVAL_RUN_ID
from app.schemas.runs import SAMPLE_ARMS_RUN_ID, SAMPLE_RUN_ID, sample_run_request
from app.services.container import Services
from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import FakeLLM
from tests.conftest import ClientFactory, started, wait_for_run
from tests.runs.conftest import POSTGRES_URL_VARIABLE, _reset_postgres, postgres_url

pytestmark = pytest.mark.usefixtures("sample_runs")  # a fresh server's sample runs


async def run_ids(client: httpx.AsyncClient) -> list[str]:
    return [run["id"] for run in (await client.get("/runs")).json()["runs"]]


async def test_a_fresh_server_creates_the_sample_run_and_runs_it_on_the_mock(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        run = await wait_for_run(client, SAMPLE_RUN_ID, "completed")
        results = (await client.get(f"/runs/{SAMPLE_RUN_ID}/results")).json()["results"]

    assert run["target"] == run["judge_target"] == "default"
    assert run["summary"]["counts"]["passed"] == 2
    assert [record["eval_id"] for record in results] == ["add", "follow-up"]


async def test_a_fresh_server_runs_the_three_mock_targets_so_compare_shows_pairs(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        run = await wait_for_run(client, SAMPLE_ARMS_RUN_ID, "completed")
        compared = (await client.get(f"/runs/{SAMPLE_ARMS_RUN_ID}/compare")).json()
        matrix = await client.get(f"/ui/runs/{SAMPLE_ARMS_RUN_ID}/matrix")

    assert [arm["target"] for arm in run["arms"]] == ["default", "terse", "slow"]
    passed = {a["arm"]["target"]: a["summary"]["counts"]["passed"] for a in run["summary"]["arms"]}
    assert passed == {"default": 2, "terse": 1, "slow": 2}
    pairs = [(p["base"]["target"], p["head"]["target"]) for p in compared["pairs"]]
    assert pairs == [("default", "terse"), ("default", "slow"), ("terse", "slow")]
    assert compared["pairs"][0]["regression"] == 1
    assert matrix.status_code == 200


async def test_a_case_limit_below_the_sample_with_arms_skips_it_and_starts(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", max_cases_per_run=2)
    async with make_client(settings) as client:
        await wait_for_run(client, SAMPLE_RUN_ID, "completed")
        assert SAMPLE_ARMS_RUN_ID not in await run_ids(client)


async def test_a_server_with_its_own_targets_makes_no_sample_run_with_arms(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    target = OpenAITarget(name="terse", provider="openai", base_url=f"{fake_llm.url}/v1", model="m")
    async with make_client(Settings(data_dir=tmp_path / "data", targets=[target])) as client:
        await wait_for_run(client, SAMPLE_RUN_ID, "completed")
        assert SAMPLE_ARMS_RUN_ID not in await run_ids(client)
    assert fake_llm.requests == []


async def test_the_sample_run_is_created_once_and_again_after_it_was_deleted(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    async with make_client(settings) as client:
        first = await wait_for_run(client, SAMPLE_RUN_ID, "completed")
        await wait_for_run(client, SAMPLE_EVAL_RUN_ID, "completed")
    async with make_client(settings) as client:
        assert set(await run_ids(client)) == {SAMPLE_RUN_ID, SAMPLE_ARMS_RUN_ID, SAMPLE_EVAL_RUN_ID}
        assert (await client.get(f"/runs/{SAMPLE_RUN_ID}")).json() == first
        assert (await client.delete(f"/runs/{SAMPLE_RUN_ID}")).status_code == 204
    async with make_client(settings) as client:
        again = await wait_for_run(client, SAMPLE_RUN_ID, "completed")

    assert again["created_at"] > first["created_at"]


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_two_replicas_creating_it_together_make_one_run(tmp_path: Path, backend: str) -> None:
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
        made = await asyncio.gather(
            *(s.runs.ensure_sample("run_twice", sample_run_request()) for s in replicas * 2)
        )
        await wait_for_store(replicas[0], "run_twice")
        listed = await replicas[1].runs.list(status=None, limit=None, cursor=None)

    assert {run.id for run in made} == {"run_twice"}
    assert [run.id for run in listed.runs] == ["run_twice"]


async def wait_for_store(services: Services, run_id: str) -> None:
    async with asyncio.timeout(20):
        while not (await services.runs.get(run_id)).finished_at:  # noqa: ASYNC110 - polls a database
            await asyncio.sleep(0.02)


async def test_no_sample_run_when_default_is_not_a_mock_or_it_is_turned_off(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    real = OpenAITarget(name="default", provider="openai", base_url=f"{fake_llm.url}/v1", model="m")
    async with make_client(Settings(data_dir=tmp_path / "a", targets=[real])) as client:
        assert await run_ids(client) == []
    async with make_client(Settings(data_dir=tmp_path / "b", sample_run=False)) as client:
        assert await run_ids(client) == []
    assert fake_llm.requests == []
