"""``GET /targets`` through the ASGI app: targets from the file, no secrets, limiter state."""

from __future__ import annotations

import httpx
import pytest
import yaml
from asgi_lifespan import LifespanManager

from app.main import create_app
from app.providers.errors import TargetsFileError
from app.settings import Settings

KEY = "sk-test-SECRET-api-0123456789"


async def test_targets_lists_configured_targets_without_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_TARGETS_KEY", KEY)
    path = tmp_path / "targets.yaml"
    path.write_text(yaml.safe_dump({"targets": [
        {"name": "gpt", "provider": "openai", "model": "gpt-4o-mini",
         "api_key": "${{ TEST_TARGETS_KEY }}", "workers": 3, "judge_target": "default"},
    ]}), encoding="utf-8")  # fmt: skip
    app = create_app(Settings(data_dir=tmp_path / "data", targets_file=path))
    async with (
        LifespanManager(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        ) as client,
    ):
        response = await client.get("/targets")
    assert response.status_code == 200
    assert KEY not in response.text
    targets = {t["name"]: t for t in response.json()["targets"]}
    assert set(targets) == {"gpt", "default"}
    gpt = targets["gpt"]
    assert gpt["provider"] == "openai"
    assert gpt["model"] == "gpt-4o-mini"
    assert gpt["judge_target"] == "default"
    assert gpt["max_concurrency"] == 3
    assert gpt["limits"]["candidate"] == {
        "limit": 3, "max_limit": 3, "in_flight": 0, "waiting": 0, "recent_429s": 0,
    }  # fmt: skip
    assert targets["default"]["provider"] == "mock"


async def test_service_without_configuration_has_the_mock_default(tmp_path):
    app = create_app(Settings(data_dir=tmp_path / "data"))
    async with (
        LifespanManager(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        ) as client,
    ):
        response = await client.get("/targets")
    assert [t["name"] for t in response.json()["targets"]] == ["default"]


async def test_unset_variable_stops_start_up_with_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("TEST_TARGETS_UNSET", raising=False)
    path = tmp_path / "targets.yaml"
    path.write_text("targets:\n  - {name: gpt, provider: openai, model: m, "
                    "api_key: '${{ TEST_TARGETS_UNSET }}'}\n", encoding="utf-8")  # fmt: skip
    app = create_app(Settings(data_dir=tmp_path / "data", targets_file=path))
    with pytest.raises(TargetsFileError, match="TEST_TARGETS_UNSET"):
        async with LifespanManager(app):
            pass
