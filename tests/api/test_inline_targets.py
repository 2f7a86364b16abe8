"""Inline targets in `/evaluate` requests: refused unless enabled, URL-checked, key unseen."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from app.providers.adapters.http import tls_context
from app.settings import Settings
from testkit.fake_llm import FakeLLM
from tests.conftest import ClientFactory

KEY = "sk-inline-secret-0123456789abcdef"
SUITE = {
    "evalcases": [
        {
            "id": "one",
            "expected_outcome": "Says hi",
            "input_messages": [{"role": "user", "content": "hi"}],
        }
    ]
}


def private_access(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path / "data", allow_inline_targets=True, inline_target_allow_private=True
    )


def inline(url: str) -> dict[str, object]:
    return {
        "name": "mine",
        "provider": "openai",
        "base_url": f"{url}/v1",
        "api_key": KEY,
        "model": "m",
    }


async def test_inline_targets_are_refused_unless_enabled(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "targets": [inline(fake_llm.url)], "target": "mine"}
        )
    assert response.status_code == 422
    assert "disabled" in response.json()["detail"]
    assert fake_llm.requests == []


async def test_inline_target_on_a_loopback_url_is_refused_without_private_access(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(
        Settings(data_dir=tmp_path / "data", allow_inline_targets=True)
    ) as client:
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "targets": [inline(fake_llm.url)], "target": "mine"}
        )
    assert response.status_code == 422
    assert KEY not in response.text
    assert fake_llm.requests == []


async def test_enabled_inline_target_is_called_and_its_key_never_echoed(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(private_access(tmp_path)) as client:
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "targets": [inline(fake_llm.url)], "target": "mine"}
        )
    assert response.status_code == 200, response.text
    record = response.json()["results"][0]
    assert record["target"] == "mine"
    assert record["status"] != "error"
    assert KEY not in response.text
    assert [r.headers["authorization"] for r in fake_llm.requests] == [f"Bearer {KEY}"] * 2


async def test_inline_targets_share_the_process_tls_settings_instead_of_loading_them_each(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Loading the CA bundle costs about 25 ms of CPU on the event loop: once per process.
    loads: list[object] = []
    real = httpx.create_ssl_context

    def counted() -> ssl.SSLContext:
        loads.append(object())
        return real()

    monkeypatch.setattr(httpx, "create_ssl_context", counted)
    tls_context.cache_clear()
    try:
        async with make_client(private_access(tmp_path)) as client:
            for _ in range(3):
                response = await client.post(
                    "/evaluate",
                    json={"suite": SUITE, "targets": [inline(fake_llm.url)], "target": "mine"},
                )
                assert response.status_code == 200, response.text
    finally:
        tls_context.cache_clear()
    assert len(fake_llm.requests) == 6
    assert len(loads) == 1


async def test_inline_target_may_not_shadow_a_configured_one(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    shadow = {**inline(fake_llm.url), "name": "default"}
    async with make_client(private_access(tmp_path)) as client:
        response = await client.post("/evaluate", json={"suite": SUITE, "targets": [shadow]})
    assert response.status_code == 422
    assert response.json()["errors"][0]["path"] == "targets[0].name"


async def test_durable_runs_refuse_inline_targets(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(private_access(tmp_path)) as client:
        response = await client.post(
            "/runs", json={"suite": SUITE, "targets": [inline(fake_llm.url)], "target": "mine"}
        )
    assert response.status_code == 422
    assert "durable runs" in response.json()["detail"]
