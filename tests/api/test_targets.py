"""GET /targets: configured targets without secrets; the targets file at start-up."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from app.errors import TargetsFileError
from app.main import create_app
from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import FakeLLM
from testkit.server import free_port
from tests.conftest import ClientFactory

KEY = "sk-live-TARGETS-0123456789"


async def test_targets_are_listed_without_keys(tmp_path: Path, make_client: ClientFactory) -> None:
    gpt = OpenAITarget(
        name="gpt", provider="openai", model="gpt-4o-mini", api_key=SecretStr(KEY),
        base_url=f"https://user:{KEY}@api.example.com/v1", max_concurrency=3,
        judge_target="default",
    )  # fmt: skip
    async with make_client(Settings(data_dir=tmp_path / "data", targets=[gpt])) as client:
        response = await client.get("/targets")
    assert response.status_code == 200
    assert KEY not in response.text
    targets = {t["name"]: t for t in response.json()["targets"]}
    assert set(targets) == {"gpt", "default"}
    gpt_shown = targets["gpt"]
    assert gpt_shown["provider"] == "openai"
    assert gpt_shown["model"] == "gpt-4o-mini"
    assert gpt_shown["base_url"] == "https://api.example.com/v1"
    assert gpt_shown["judge_target"] == "default"
    assert gpt_shown["max_concurrency"] == 3
    assert gpt_shown["limits"]["candidate"] == {
        "limit": 3, "max_limit": 3, "in_flight": 0, "waiting": 0, "recent_429s": 0,
    }  # fmt: skip
    assert targets["default"]["provider"] == "mock"


async def test_service_without_configuration_has_three_mock_targets_to_compare_and_one_to_embed(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    suite = {"dataset": "d", "evalcases": [
        {"id": "add", "expected_outcome": "Answers 4.",
         "input_messages": [{"role": "user", "content": "What is 2 + 2? Answers: 4"}]},
        {"id": "six", "expected_outcome": "Answers 6.",
         "input_messages": [{"role": "user", "content": "And plus 2? Answers: 6"}]},
    ]}  # fmt: skip
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        listed = (await client.get("/targets")).json()["targets"]
        body = {"suite": suite, "targets": ["default", "terse", "slow"]}
        summary = (await client.post("/evaluate", json=body)).json()["summary"]

    assert [(t["name"], t["provider"], t["kind"]) for t in listed] == [
        ("default", "mock", "api"), ("terse", "mock", "api"), ("slow", "mock", "api"),
        ("embeddings", "mock", "embeddings"),
    ]  # fmt: skip
    passed = {arm["arm"]["target"]: arm["summary"]["counts"]["passed"] for arm in summary["arms"]}
    assert passed == {"default": 2, "terse": 1, "slow": 2}


def test_unset_variable_in_the_targets_file_stops_start_up_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEST_TARGETS_UNSET", raising=False)
    path = tmp_path / "targets.yaml"
    path.write_text("targets:\n  - {name: gpt, provider: openai, model: m, "
                    "api_key: '${{ TEST_TARGETS_UNSET }}'}\n", encoding="utf-8")  # fmt: skip
    with pytest.raises(TargetsFileError, match="TEST_TARGETS_UNSET"):
        create_app(Settings(data_dir=tmp_path / "data", targets_file=path))


async def test_check_says_which_targets_answer_without_retrying_the_others(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    answering = OpenAITarget(
        name="answering", provider="openai", model="m", base_url=f"{fake_llm.url}/v1"
    )
    refused = free_port()  # nothing listens there
    silent = OpenAITarget(
        name="silent", provider="openai", model="m", base_url=f"http://127.0.0.1:{refused}/v1",
        api_key=SecretStr(KEY),
    )  # fmt: skip
    settings = Settings(data_dir=tmp_path / "data", targets=[answering, silent])
    async with make_client(settings) as client:
        listed = (await client.get("/targets")).json()
        checked = await client.get("/targets", params={"check": "true"})

    assert listed["checks"] is None
    assert fake_llm.requests[0].path.endswith("/chat/completions")
    checks = checked.json()["checks"]
    assert checks["answering"]["status"] == "ok"
    assert checks["default"]["status"] == "ok"
    assert checks["silent"]["status"] == "failed"
    assert "Connection refused" in checks["silent"]["detail"]
    assert str(refused) not in checks["silent"]["detail"]  # never where a target points
    assert KEY not in checked.text
    assert len(fake_llm.requests) == 1  # one probe, and none for the listing without check
