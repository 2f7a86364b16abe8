"""Text no file name or store can hold: a clear problem naming field and value, never a 500."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from tests.conftest import ClientFactory


def workspace_settings(tmp_path: Path) -> Settings:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "notes.md").write_text("notes", encoding="utf-8")
    return Settings(data_dir=tmp_path / "data", workspace_roots=[root], sample_run=False)


def file_part(path: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "file", "value": path}]}]


def suite_body(messages: list[dict[str, Any]]) -> dict[str, Any]:
    case = {"id": "one", "expected_outcome": "ok", "input_messages": messages}
    return {"suite": {"evalcases": [case]}}


SUITE_ROUTES = ["/evaluate", "/runs", "/validate"]
NUL_PATH = "notes\u0000.md"


async def test_a_nul_in_a_format_file_path_is_refused_by_name(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(workspace_settings(tmp_path), raise_app_exceptions=False) as client:
        response = await client.post("/format", json={"input_messages": file_part(NUL_PATH)})
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["errors"][0]["path"] == "input_messages[0].content[0].value"
    assert "'notes\\x00.md'" in problem["detail"]
    assert "NUL" in problem["detail"]


@pytest.mark.parametrize("route", SUITE_ROUTES)
@pytest.mark.parametrize(
    "suite",
    [
        suite_body(file_part(NUL_PATH)),
        {"suite": {"evalcases": "cases\u0000.yaml"}},
    ],
    ids=["file-part", "cases-file"],
)
async def test_a_nul_in_a_suite_path_is_refused_by_name(
    route: str, suite: dict[str, Any], tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(workspace_settings(tmp_path), raise_app_exceptions=False) as client:
        response = await client.post(route, json=suite)
    assert response.status_code in (200, 422), response.text
    errors = response.json()["errors"]
    assert "\\x00" in errors[0]["message"]
    assert "NUL" in errors[0]["message"]
    if route == "/validate":
        assert response.json()["valid"] is False


SURROGATE_BODIES = {
    "/format": '{"input_messages": [{"role": "user", "content": "a\\ud800b"}]}',
    **{
        route: json.dumps(suite_body([{"role": "user", "content": "PLACEHOLDER"}])).replace(
            "PLACEHOLDER", "a\\ud800b"
        )
        for route in SUITE_ROUTES
    },
}


@pytest.mark.parametrize("route", sorted(SURROGATE_BODIES))
async def test_a_lone_surrogate_in_content_is_refused_naming_field_and_value(
    route: str, tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", sample_run=False)
    async with make_client(settings, raise_app_exceptions=False) as client:
        response = await client.post(
            route, content=SURROGATE_BODIES[route], headers={"content-type": "application/json"}
        )
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["errors"][0]["path"].endswith("input_messages[0].content")
    assert '"a\\ud800b"' in problem["detail"]


async def test_a_lone_surrogate_in_a_yaml_suite_is_an_invalid_suite(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    suite = 'evalcases:\n  - id: "x\\ud800"\n    expected_outcome: ok\n    input_messages: []\n'
    async with make_client(Settings(data_dir=tmp_path / "data", sample_run=False)) as client:
        response = await client.post("/validate", json={"suite": suite})
    assert response.status_code == 200, response.text
    assert response.json()["valid"] is False
    assert "invalid Unicode character escape" in response.json()["errors"][0]["message"]


async def test_surrogate_pairs_are_characters_and_accepted(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    body = '{"input_messages": [{"role": "user", "content": "smile \\ud83d\\ude00"}]}'
    async with make_client(Settings(data_dir=tmp_path / "data", sample_run=False)) as client:
        response = await client.post(
            "/format", content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == 200, response.text
    assert response.json()["question"] == "smile \U0001f600"
