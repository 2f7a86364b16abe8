"""``env`` in a request fills the suite's ``${{ NAME }}`` references; the service's own never."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from tests.conftest import ClientFactory, wait_for_run

SUITE = {"tests": [{"id": "a", "criteria": "Greets", "input": "Hi, I am ${{ NAME }}."}]}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", sample_run=False)


async def test_validate_names_a_reference_the_request_does_not_give(
    settings: Settings, make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAME", "the service's own value")
    async with make_client(settings) as client:
        missing = (await client.post("/validate", json={"suite": SUITE})).json()
        body = {"suite": SUITE, "env": {"NAME": "Ada"}}
        given = await client.post("/validate?prompts=true", json=body)
    assert missing["valid"] is False
    [error] = missing["errors"]
    assert error["path"] == "tests[0].input"
    assert "'${{ NAME }}' is not given" in error["message"]
    assert given.json()["cases"][0]["question"] == "Hi, I am Ada."


@pytest.mark.parametrize("route", ["/evaluate", "/runs"])
async def test_runs_send_the_candidate_the_filled_in_text(
    settings: Settings, make_client: ClientFactory, route: str
) -> None:
    body: dict[str, Any] = {"suite": SUITE, "env": {"NAME": "Ada"}}
    async with make_client(settings) as client:
        response = await client.post(route, json=body)
        assert response.status_code in (200, 202), response.text
        if route == "/runs":
            run = await wait_for_run(client, response.json()["id"])
            records = (await client.get(f"/runs/{run['id']}/results")).json()["results"]
        else:
            records = response.json()["results"]
    assert records[0]["raw_request"]["question"] == "Hi, I am Ada."
    assert records[0]["candidate_answer"] == "Hi, I am Ada."  # the mock echoes it
