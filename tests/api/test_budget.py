"""A suite's ``budget_usd``: once a run's finished cases cost that much, no more start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from tests.conftest import ClientFactory, wait_for_run
from tests.suites.helpers import check, errors_by_path

REFUSAL = "not run: the run's budget_usd of 1 is spent (1.2 USD so far)"


def suite(budget: Any = 1.0) -> dict[str, Any]:
    cases = [{"id": f"c{n}", "criteria": "Echoes.", "input": f"Say {n}"} for n in range(5)]
    return {"budget_usd": budget, "tests": cases}


def settings(tmp_path: Path, database_url: str | None = None) -> Settings:
    agent = {"name": "paid", "provider": "mock", "cost_usd": 0.4, "max_concurrency": 1}
    extra = {"database_url": database_url} if database_url else {}
    return Settings.model_validate(
        {"data_dir": tmp_path / "data", "targets": [agent], "sample_run": False, **extra}
    )


def assert_stopped_at_the_budget(records: list[dict[str, Any]]) -> None:
    by_id = {record["eval_id"]: record for record in records}
    ran = [by_id[f"c{n}"] for n in range(3)]
    assert [r["cost_usd"]["candidate"] for r in ran] == [0.4, 0.4, 0.4]
    assert all(r["status"] != "error" for r in ran), ran
    for skipped in (by_id["c3"], by_id["c4"]):
        assert (skipped["status"], skipped["error"]) == ("error", REFUSAL)
        assert skipped["candidate_answer"] is None
        assert skipped["attempts"] == {"candidate": 0, "judge": 0}


async def test_an_evaluation_starts_no_case_once_its_budget_is_spent(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/evaluate", json={"suite": suite(), "target": "paid"})
    assert response.status_code == 200, response.text
    assert_stopped_at_the_budget(response.json()["results"])


async def test_a_durable_run_counts_its_stored_results_against_its_budget(
    tmp_path: Path, make_client: ClientFactory, database_url: str
) -> None:
    async with make_client(settings(tmp_path, database_url)) as client:
        created = await client.post("/runs", json={"suite": suite(), "target": "paid"})
        assert created.status_code == 202, created.text
        run = await wait_for_run(client, created.json()["id"])
        results = (await client.get(f"/runs/{run['id']}/results")).json()["results"]
    assert run["status"] == "completed", run
    assert_stopped_at_the_budget(results)


@pytest.mark.parametrize("budget", [0, -1, "1 USD", True])
async def test_a_budget_that_is_not_a_positive_number_is_refused(budget: Any) -> None:
    report = await check(suite(budget))
    assert f"not {budget!r}" in errors_by_path(report)["budget_usd"]


async def test_a_requests_budget_wins_over_the_suites(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    body = {"suite": suite(100.0), "target": "paid", "budget_usd": 1}
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/evaluate", json=body)
        refused = await client.post("/evaluate", json={**body, "budget_usd": 0})
    assert response.status_code == 200, response.text
    assert_stopped_at_the_budget(response.json()["results"])
    assert refused.status_code == 422
    assert "budget_usd" in refused.text
