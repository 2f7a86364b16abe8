"""``GET /runs/compare`` through the ASGI app: mock targets with known answers, real SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from app.settings import Settings
from app.settings.targets import MockTarget
from tests.conftest import ClientFactory, wait_for_run

KEY_A, KEY_B = "compare-key-a", "compare-key-b"


def suite(dataset: str, ids: list[str]) -> dict[str, Any]:
    return {
        "dataset": dataset,
        "evalcases": [
            {
                "id": eval_id,
                "expected_outcome": f"{eval_id}x {eval_id}y",
                "input_messages": [{"role": "user", "content": f"About {eval_id}?"}],
            }
            for eval_id in ids
        ],
    }


def settings_for(tmp_path: Path, **extra: Any) -> Settings:
    both = {e: f"{e}x {e}y" for e in ("a", "b", "c", "d")}
    worse = {**both, "b": "nothing", "c": "cx"}
    targets = [
        MockTarget(name="both", answers=both),
        MockTarget(name="worse", answers=worse),
    ]
    return Settings(data_dir=tmp_path / "data", targets=targets, sample_run=False, **extra)


async def run(
    client: httpx.AsyncClient, target: str, body: dict[str, Any], key: str | None = None
) -> str:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    request = {"suite": body, "target": target, "judge_target": "both"}
    created = await client.post("/runs", json=request, headers=headers)
    assert created.status_code == 202, created.text
    run_id: str = created.json()["id"]
    client.headers.update(headers)
    await wait_for_run(client, run_id)
    return run_id


async def test_regressions_come_first_with_their_deltas(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    async with make_client(settings_for(tmp_path)) as client:
        base = await run(client, "both", suite("s", ["a", "b", "c"]))
        head = await run(client, "worse", suite("s", ["a", "b", "c"]))
        response = await client.get("/runs/compare", params={"base": base, "head": head})

    body = response.json()
    assert response.status_code == 200
    assert [(c["eval_id"], c["change"], c["score_delta"]) for c in body["cases"]] == [
        ("b", "regression", -1.0),
        ("c", "regression", -0.5),
        ("a", "unchanged", 0.0),
    ]
    assert body["counts"] == {"regression": 2, "improvement": 0, "unchanged": 1}
    assert body["same_suite"] is True
    assert body["shared"] == 3
    assert body["difference"]["pairs"] == 3
    assert body["difference"]["mean_difference"] == pytest.approx(-0.5)
    assert body["cases"][0]["answers"] is None


async def test_runs_of_different_suites_compare_on_shared_ids(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    async with make_client(settings_for(tmp_path)) as client:
        base = await run(client, "both", suite("first", ["a", "b", "c"]))
        head = await run(client, "both", suite("second", ["b", "c", "d"]))
        body = (await client.get("/runs/compare", params={"base": base, "head": head})).json()

    assert body["same_suite"] is False
    assert body["shared"] == 2
    assert sorted(c["eval_id"] for c in body["cases"]) == ["b", "c"]
    assert (body["base"]["only_here"], body["head"]["only_here"]) == (1, 1)
    assert (body["base"]["datasets"], body["head"]["datasets"]) == (["first"], ["second"])


async def test_an_unknown_run_is_a_404_naming_it(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    async with make_client(settings_for(tmp_path)) as client:
        base = await run(client, "both", suite("s", ["a"]))
        response = await client.get("/runs/compare", params={"base": base, "head": "run_nope"})
        missing = await client.get("/runs/compare", params={"base": base})

    assert response.status_code == 404
    assert "run_nope" in response.json()["detail"]
    assert missing.status_code == 422
    assert "head" in missing.text


async def test_another_keys_run_is_a_404(make_client: ClientFactory, tmp_path: Path) -> None:
    keys = [SecretStr(KEY_A), SecretStr(KEY_B)]
    async with make_client(settings_for(tmp_path, api_keys=keys)) as client:
        mine = await run(client, "both", suite("s", ["a"]), key=KEY_A)
        theirs = await run(client, "both", suite("s", ["a"]), key=KEY_B)
        client.headers["Authorization"] = f"Bearer {KEY_A}"
        refused = await client.get("/runs/compare", params={"base": mine, "head": theirs})
        allowed = await client.get("/runs/compare", params={"base": mine, "head": mine})
        fragment = await client.get("/ui/fragments/compare", params={"base": theirs, "head": mine})

    assert refused.status_code == 404
    assert allowed.status_code == 200
    assert fragment.status_code == 404
