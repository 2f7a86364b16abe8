"""A suite's prompts are arms (target x prompt): /evaluate and durable runs, both databases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from testkit.fake_llm import FakeLLM, RecordedRequest, Reply
from tests.api.test_arms import arms_settings
from tests.conftest import ClientFactory, wait_for_run


def by_prompt(recorded: RecordedRequest) -> Reply:
    """The careful prompt gets 4 (passes), the sloppy one 5 (fails), whatever the model."""
    question = recorded.json["messages"][-1]["content"]
    text = "4" if question.startswith("Careful") else "5"
    return Reply(body={"choices": [{"message": {"role": "assistant", "content": text}}]})


def matrix(tests: int = 2, **extra: Any) -> str:
    document = {
        "prompts": [
            {"label": "careful", "raw": "Careful: what is 2 + {{ n }}?"},
            "Sloppy: 2 + {{ n }}?",
        ],
        "providers": ["a", "b"],
        "tests": [
            {"id": f"t{index}", "vars": {"n": 2}, "assert": [{"type": "equals", "value": "4"}]}
            for index in range(tests)
        ],
        **extra,
    }
    return yaml.safe_dump(document)


def arm_key(record: dict[str, Any]) -> tuple[str, str, str]:
    return record["eval_id"], record["arm"]["target"], record["arm"]["prompt"]


async def test_every_test_runs_once_per_target_and_prompt_and_records_say_which(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    settings = arms_settings(tmp_path, fake_llm)
    fake_llm.responder = by_prompt
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": matrix()})
    assert response.status_code == 200, response.text
    body = response.json()
    assert [arm_key(r) for r in body["results"]] == [
        (f"t{i}", target, prompt)
        for i in range(2)
        for target in "ab"
        for prompt in ("careful", "prompt-2")
    ]
    rates = {
        (arm["arm"]["target"], arm["arm"]["prompt"]): arm["summary"]["counts"]["passed"]
        for arm in body["summary"]["arms"]
    }
    assert rates == {
        ("a", "careful"): 2,
        ("a", "prompt-2"): 0,
        ("b", "careful"): 2,
        ("b", "prompt-2"): 0,
    }
    sent = sorted((r.json["model"], r.json["messages"][-1]["content"]) for r in fake_llm.requests)
    assert sent == sorted(
        (model, question)
        for model in ("ma", "mb")
        for question in ("Careful: what is 2 + 2?", "Sloppy: 2 + 2?")
        for _ in range(2)
    )


async def test_a_providers_prompts_and_a_tests_prompts_narrow_their_arms(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    document = yaml.safe_load(matrix())
    document["providers"] = ["a", {"id": "openai:x", "label": "b", "prompts": ["careful"]}]
    document["tests"][1]["prompts"] = ["prompt-2"]
    fake_llm.responder = by_prompt
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": yaml.safe_dump(document)})
        unknown = yaml.safe_load(matrix())
        unknown["providers"] = ["a", {"id": "b", "prompts": ["terse"]}]
        refused = await client.post("/evaluate", json={"suite": yaml.safe_dump(unknown)})
    assert response.status_code == 200, response.text
    arms = [(a["arm"]["target"], a["arm"]["prompt"]) for a in response.json()["summary"]["arms"]]
    assert arms == [("a", "careful"), ("a", "prompt-2"), ("b", "careful")]
    assert [arm_key(r) for r in response.json()["results"]] == [
        ("t0", "a", "careful"),
        ("t0", "a", "prompt-2"),
        ("t0", "b", "careful"),
        ("t1", "a", "prompt-2"),
    ]
    assert refused.status_code == 422
    assert "providers[1].prompts[0]" in refused.text
    assert "'terse' names no prompt" in refused.text


async def test_a_durable_run_stores_each_test_once_per_prompt_arm_and_compares_them(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    settings = arms_settings(tmp_path, fake_llm, database_url)
    fake_llm.responder = by_prompt
    async with make_client(settings) as client:
        created = await client.post(
            "/runs", json={"suite": matrix(tests=6, providers=["a"]), "max_concurrency": 2}
        )
        assert created.status_code == 202, created.text
        run_id = created.json()["id"]
        run = await wait_for_run(client, run_id)
        results = (await client.get(f"/runs/{run_id}/results?limit=100")).json()["results"]
        compared = (await client.get(f"/runs/{run_id}/compare")).json()
    assert run["status"] == "completed"
    assert run["progress"] == {"done": 12, "total": 12}
    assert [(arm["target"], arm["prompt"]) for arm in run["arms"]] == [
        ("a", "careful"),
        ("a", "prompt-2"),
    ]
    assert sorted(arm_key(r) for r in results) == sorted(
        (f"t{i}", "a", prompt) for i in range(6) for prompt in ("careful", "prompt-2")
    )
    [pair] = compared["pairs"]
    assert (pair["base"]["prompt"], pair["head"]["prompt"]) == ("careful", "prompt-2")
    assert pair["verdict"] == "base_better"
    assert len(fake_llm.requests) == 12
