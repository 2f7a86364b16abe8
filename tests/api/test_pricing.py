"""Targets' ``pricing``: the cost of calls whose targets report none, over real HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from testkit.fake_llm import JUDGE_MARKER, FakeLLM
from tests.conftest import ClientFactory

KEY = "sk-test-key-0123456789"
PRICING = {"input_per_million": 2.5, "outputPerMillion": 10}


def suite(*graders: dict[str, Any]) -> dict[str, Any]:
    case = {"id": "c1", "criteria": "Answers 4.", "input": "What is 2 + 2?"}
    return {"tests": [{**case, **({"assertions": list(graders)} if graders else {})}]}


def settings_for(tmp_path: Path, fake: FakeLLM, **target: Any) -> Settings:
    entry = {"name": "local", "provider": "openai", "model": "smol", "api_key": KEY,
             "base_url": f"{fake.url}/v1", **target}  # fmt: skip
    mock = {"name": "agent", "provider": "mock", "cost_usd": 0.5, "judge_target": "local"}
    return Settings.model_validate(
        {"data_dir": tmp_path / "data", "targets": [entry, mock], "sample_run": False}
    )


async def evaluate(
    make_client: ClientFactory, settings: Settings, body: dict[str, Any]
) -> dict[str, Any]:
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 200, response.text
    (record,) = response.json()["results"]
    return record  # type: ignore[no-any-return]


def priced(usage: dict[str, Any]) -> float:
    tokens_in, tokens_out = int(usage["prompt_tokens"]), int(usage["completion_tokens"])
    return (tokens_in * 2.5 + tokens_out * 10) / 1_000_000


async def test_each_call_costs_its_tokens_at_the_targets_prices(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    settings = settings_for(tmp_path, fake_llm, pricing=PRICING)
    record = await evaluate(make_client, settings, {"suite": suite(), "target": "local"})
    async with make_client(settings) as client:
        listed = (await client.get("/targets")).json()["targets"]

    prices = {target["name"]: target["pricing"] for target in listed}
    assert prices["local"] == {"input_per_million": 2.5, "output_per_million": 10}
    assert prices["agent"] is None
    candidate, judge = fake_llm.requests
    assert JUDGE_MARKER in judge.messages_text()
    assert candidate.usage is not None
    assert judge.usage is not None
    assert record["cost_usd"]["candidate"] == pytest.approx(priced(candidate.usage))
    assert record["cost_usd"]["judge"] == pytest.approx(priced(judge.usage))
    assert record["cost_usd"]["candidate"] > 0


@pytest.mark.parametrize(("threshold", "passed"), [(0.01, True), (1e-9, False)])
async def test_the_cost_grader_grades_an_api_target_by_its_prices(
    tmp_path: Path,
    fake_llm: FakeLLM,
    make_client: ClientFactory,
    threshold: float,
    passed: bool,
) -> None:
    settings = settings_for(tmp_path, fake_llm, pricing=PRICING)
    body = {"suite": suite({"type": "cost", "threshold": threshold}), "target": "local"}
    record = await evaluate(make_client, settings, body)

    (grader,) = record["evaluator_results"]
    assert (grader["status"], grader["passed"]) == ("ok", passed)


async def test_without_prices_an_api_call_has_no_cost(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    record = await evaluate(
        make_client, settings_for(tmp_path, fake_llm), {"suite": suite(), "target": "local"}
    )
    assert record["cost_usd"] == {"candidate": None, "judge": None}


async def test_a_cost_the_target_reports_is_kept_and_its_judge_is_priced(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    settings = settings_for(tmp_path, fake_llm, pricing=PRICING)
    record = await evaluate(make_client, settings, {"suite": suite(), "target": "agent"})

    (judge,) = fake_llm.requests
    assert judge.usage is not None
    assert record["cost_usd"]["candidate"] == 0.5
    assert record["cost_usd"]["judge"] == pytest.approx(priced(judge.usage))


@pytest.mark.parametrize(
    ("pricing", "field"),
    [
        ({"input_per_million": -1, "output_per_million": 1}, "input_per_million"),
        ({"input_per_million": 1}, "output_per_million"),
        ({"input_per_million": 1, "output_per_million": 1, "per_request": 1}, "per_request"),
    ],
)
def test_malformed_prices_are_refused_naming_the_field(
    tmp_path: Path, fake_llm: FakeLLM, pricing: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        settings_for(tmp_path, fake_llm, pricing=pricing)
