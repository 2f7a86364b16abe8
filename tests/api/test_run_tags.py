"""Tags on runs: set in ``POST /runs``, replaced with ``PATCH /runs/{id}``, found by ``?tag=``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from app.settings import Settings
from tests.conftest import ClientFactory, wait_for_run


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", sample_run=False)


def suite(dataset: str) -> dict[str, Any]:
    case = {
        "id": "c0",
        "expected_outcome": "x",
        "input_messages": [{"role": "user", "content": "q"}],
    }
    return {"dataset": dataset, "evalcases": [case]}


async def start(client: httpx.AsyncClient, dataset: str, *tags: str) -> str:
    response = await client.post("/runs", json={"suite": suite(dataset), "tags": list(tags)})
    assert response.status_code == 202, response.text
    run_id: str = response.json()["id"]
    await wait_for_run(client, run_id)
    return run_id


async def listed(client: httpx.AsyncClient, **params: str) -> list[str]:
    response = await client.get("/runs", params=params)
    assert response.status_code == 200, response.text
    return [run["id"] for run in response.json()["runs"]]


async def test_tags_are_set_with_the_run_listed_with_it_and_found_by_tag_and_suite(
    client: httpx.AsyncClient,
) -> None:
    old_main = await start(client, "support", "main", "sha:1a2b")
    other_suite = await start(client, "billing", "main")
    new_main = await start(client, "support", "pr/12", "main", "main")
    untagged = await start(client, "support")

    run = (await client.get(f"/runs/{new_main}")).json()
    assert run["tags"] == ["main", "pr/12"]  # sorted, a repeat counted once
    assert (await client.get(f"/runs/{untagged}")).json()["tags"] == []
    assert await listed(client, tag="main") == [new_main, other_suite, old_main]
    assert await listed(client, tag="main", name="support") == [new_main, old_main]
    # What `evalx compare --base-from tag:main` asks for:
    assert await listed(client, tag="main", name="support", status="completed", limit="1") == [
        new_main
    ]
    assert await listed(client, tag="release") == []
    page = (await client.get("/runs", params={"tag": "main"})).json()["runs"]
    assert [r["tags"] for r in page] == [["main", "pr/12"], ["main"], ["main", "sha:1a2b"]]


async def test_a_yaml_suite_takes_its_tags_from_the_query(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/runs?tags=main,nightly&tags=sha:9f",
        content=yaml.safe_dump(suite("support")),
        headers={"content-type": "application/yaml"},
    )
    assert response.status_code == 202, response.text
    assert response.json()["tags"] == ["main", "nightly", "sha:9f"]


async def test_patch_replaces_the_tags_of_a_finished_run(client: httpx.AsyncClient) -> None:
    run_id = await start(client, "support", "main")
    response = await client.patch(f"/runs/{run_id}", json={"tags": ["release-2.1", "main"]})
    assert response.status_code == 200, response.text
    assert response.json()["tags"] == ["main", "release-2.1"]
    assert response.json()["status"] == "completed"
    await client.patch(f"/runs/{run_id}", json={"tags": ["release-2.1"]})
    assert await listed(client, tag="main") == []
    assert await listed(client, tag="release-2.1") == [run_id]
    cleared = await client.patch(f"/runs/{run_id}", json={"tags": []})
    assert cleared.json()["tags"] == []
    assert await listed(client, tag="release-2.1") == []


@pytest.mark.parametrize(
    ("body", "field", "value"),
    [
        ({"tags": ["has space"]}, "tags[0]", "has space"),
        ({"tags": ["-leading"]}, "tags[0]", "-leading"),
        ({"tags": ["ok", ""]}, "tags[1]", ""),
        ({"tags": ["x" * 101]}, "tags[0]", "x" * 40),  # a long value is shown cut short
        ({"tags": [f"t{i}" for i in range(21)]}, "tags", None),
        ({"tags": "main"}, "tags", "main"),
        ({"tag": ["main"]}, "tag", None),
    ],
)
async def test_a_bad_tag_is_a_422_naming_the_field(
    client: httpx.AsyncClient, body: dict[str, Any], field: str, value: str | None
) -> None:
    run_id = await start(client, "support")
    for response in (
        await client.patch(f"/runs/{run_id}", json=body),
        await client.post("/runs", json={"suite": suite("support"), **body}),
    ):
        assert response.status_code == 422, response.text
        problem = response.json()
        assert field in [error["path"] for error in problem["errors"]], problem
        if value is not None:
            assert value in response.text
    assert (await client.get(f"/runs/{run_id}")).json()["tags"] == []
    assert await listed(client) == [run_id]  # the refused runs were not stored


async def test_tags_go_with_a_deleted_run_and_a_regrade_takes_its_own(
    client: httpx.AsyncClient,
) -> None:
    run_id = await start(client, "support", "main")
    regrade = await client.post(f"/runs/{run_id}/regrade", json={"tags": ["regraded"]})
    assert regrade.status_code == 202, regrade.text
    assert regrade.json()["tags"] == ["regraded"]
    await wait_for_run(client, regrade.json()["id"])
    assert await listed(client, tag="main") == [run_id]
    assert (await client.delete(f"/runs/{run_id}")).status_code == 204
    assert await listed(client, tag="main") == []
    again = await start(client, "support", "main")  # the tag is free again, nothing left over
    assert await listed(client, tag="main") == [again]


async def test_only_the_owner_sees_or_changes_a_runs_tags(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_keys=["key-a", "key-b"], sample_run=False)
    key_a, key_b = {"Authorization": "Bearer key-a"}, {"Authorization": "Bearer key-b"}
    async with make_client(settings) as client:
        body = {"suite": suite("support"), "tags": ["main"]}
        run_id = (await client.post("/runs", json=body, headers=key_a)).json()["id"]
        refused = await client.patch(f"/runs/{run_id}", json={"tags": []}, headers=key_b)
        assert refused.status_code == 404
        assert refused.json()["type"] == "/problems/run-not-found"
        assert (await client.get("/runs", params={"tag": "main"}, headers=key_b)).json()[
            "runs"
        ] == []
        mine = (await client.get("/runs", params={"tag": "main"}, headers=key_a)).json()["runs"]
        assert [run["id"] for run in mine] == [run_id]
        assert (
            await client.patch("/runs/run_nope", json={"tags": []}, headers=key_a)
        ).status_code == 404


async def test_the_viewer_shows_each_runs_tags_and_a_field_to_change_them(
    client: httpx.AsyncClient,
) -> None:
    tagged = await start(client, "support", "main", "sha:1a2b")
    plain = await start(client, "support")
    runs = (await client.get("/ui/fragments/runs")).text
    page = (await client.get(f"/ui/fragments/runs/{tagged}")).text
    bare = (await client.get(f"/ui/fragments/runs/{plain}")).text

    row = runs[runs.index(f'value="{tagged}"') :]
    row = row[: row.index("</tr>")]
    assert re.findall(r'<span class="tag run-tag"[^>]*>([^<]*)</span>', row) == ["main", "sha:1a2b"]
    assert re.search(r'data-text="[^"]*main sha:1a2b', runs)
    tags = page[page.index('id="run-tags"') : page.index('name="tags"')]
    assert re.findall(r'class="tag run-tag">([^<]*)<', tags) == ["main", "sha:1a2b"]
    assert f'data-url="/runs/{tagged}"' in page
    assert 'value="main sha:1a2b"' in page
    assert 'id="run-tags"><span class="muted">none</span>' in bare
