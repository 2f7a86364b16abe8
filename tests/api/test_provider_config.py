"""A promptfoo provider's ``config``: its model settings reach its arm's calls, in each API's form.

promptfoo 0.123.1 measured on an echoing fake (docs/suites.md): a provider's settings and the
API fields it knows are sent in its API's request; a grading provider object's ``config``
reaches the grading calls, an ``llm-rubric``'s own ``config`` does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from testkit.fake_llm import FakeLLM, RecordedRequest
from tests.api.test_tool_loops import settings_for
from tests.conftest import ClientFactory, wait_for_run


def document(providers: list[Any], **extra: Any) -> str:
    return yaml.safe_dump(
        {
            "prompts": ["Say hello to {{ who }}"],
            "providers": providers,
            "tests": [{"vars": {"who": "Ada"}, "assert": [{"type": "contains", "value": "a"}]}],
            **extra,
        }
    )


def candidate_bodies(fake: FakeLLM) -> dict[str, dict[str, Any]]:
    """The body of each candidate call by the model (or path) it went to."""
    return {
        str(r.json.get("model") or r.path): r.json for r in fake.requests if "Ada" in str(r.json)
    }


async def evaluate(
    tmp_path: Path, fake: FakeLLM, make_client: ClientFactory, suite: str
) -> dict[str, Any]:
    async with make_client(settings_for(tmp_path, fake)) as client:
        response = await client.post("/evaluate", json={"suite": suite})
    assert response.status_code == 200, response.text
    assert fake.shape_errors == []
    body: dict[str, Any] = response.json()
    return body


async def test_each_providers_settings_reach_its_arms_calls_in_its_apis_form(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    providers = [
        {
            "id": "openai:chat:gpt-4o",
            "label": "gpt",
            "config": {
                "temperature": 0.3, "max_tokens": 50, "top_p": 0.9, "seed": 7, "stop": ["##"],
                "frequency_penalty": 0.5, "presence_penalty": 0.2, "store": True,
                "metadata": {"team": "evals"}, "passthrough": {"logit_bias": {"50256": -100}},
            },
        },
        {
            "id": "openai:responses:gpt-4.1",
            "label": "responses",
            "config": {"temperature": 0.4, "max_output_tokens": 60, "instructions": "Be brief."},
        },
        {
            "id": "anthropic:messages:claude-sonnet-4-6",
            "label": "claude",
            "config": {
                "max_tokens": 2000, "top_k": 5, "stop_sequences": ["##"], "showThinking": False,
                "thinking": {"type": "enabled", "budget_tokens": 1024},
            },
        },
        {
            "id": "google:gemini-2.5-pro",
            "label": "gemini",
            "config": {
                "generationConfig": {"temperature": 0, "maxOutputTokens": 70, "topK": 3,
                                     "thinkingConfig": {"thinkingBudget": 0}},
            },
        },
    ]  # fmt: skip
    body = await evaluate(tmp_path, fake_llm, make_client, document(providers))
    assert [r["status"] for r in body["results"]] == ["passed"] * 4
    gpt, responses, claude = (
        next(r.json for r in fake_llm.requests if r.path.endswith(end))
        for end in ("/chat/completions", "/responses", "/messages")
    )
    gemini = next(r.json for r in fake_llm.requests if "generateContent" in r.path)
    assert {k: gpt[k] for k in gpt if k not in ("model", "messages")} == {
        "temperature": 0.3, "max_tokens": 50, "top_p": 0.9, "seed": 7, "stop": ["##"],
        "frequency_penalty": 0.5, "presence_penalty": 0.2, "store": True,
        "metadata": {"team": "evals"}, "logit_bias": {"50256": -100},
    }  # fmt: skip
    assert (responses["temperature"], responses["max_output_tokens"]) == (0.4, 60)
    assert responses["instructions"].startswith("Be brief.\n\n")  # then the prompt's system
    assert (claude["max_tokens"], claude["top_k"], claude["stop_sequences"]) == (2000, 5, ["##"])
    assert claude["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert gemini["generationConfig"] == {
        "temperature": 0, "maxOutputTokens": 70, "topK": 3,
        "thinkingConfig": {"thinkingBudget": 0},
    }  # fmt: skip


async def test_a_durable_run_gives_each_arm_its_own_providers_settings(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    providers = [
        {"id": "openai:chat:a", "label": "gpt", "config": {"temperature": 0.1, "seed": 1}},
        {"id": "openai:chat:b", "label": "azure", "config": {"max_tokens": 9}},
    ]
    settings = settings_for(tmp_path, fake_llm).model_copy(update={"database_url": database_url})
    async with make_client(settings) as client:
        created = await client.post("/runs", json={"suite": document(providers)})
        assert created.status_code == 202, created.text
        run = await wait_for_run(client, created.json()["id"])
    assert run["status"] == "completed"
    gpt = next(r.json for r in fake_llm.requests if r.path.endswith("/v1/chat/completions"))
    azure = next(r.json for r in fake_llm.requests if "/deployments/" in r.path)
    assert (gpt["temperature"], gpt["seed"], "max_tokens" in gpt) == (0.1, 1, False)
    assert (azure["max_tokens"], "temperature" in azure, "seed" in azure) == (9, False, False)


@pytest.mark.parametrize(
    ("provider", "named"),
    [
        # a setting the target's API does not take: refused when the run is planned
        ({"id": "openai:chat:x", "label": "claude", "config": {"seed": 3}}, "seed"),
        ({"id": "openai:chat:x", "label": "responses", "config": {"stop": ["#"]}}, "stop"),
        # a key that is no setting, tool or API field promptfoo sends
        ({"id": "openai:chat:x", "label": "gpt", "config": {"n": 2, "best_of": 3}}, "best_of"),
        ({"id": "anthropic:x", "label": "claude", "config": {"showThinking": True}}, "Thinking"),
        ({"id": "openai:chat:x", "label": "gpt", "config": {"temperature": "hot"}}, "hot"),
        # body fields that would choose the model or how many answers come back
        ({"id": "openai:x", "label": "gpt", "config": {"passthrough": {"model": "o3"}}}, "model"),
        ({"id": "openai:x", "label": "gpt", "config": {"passthrough": {"n": 9}}}, "'n'"),
    ],
    ids=[
        *("untaken-seed", "untaken-stop", "unknown-key", "show-thinking", "bad-value"),
        *("passthrough-model", "passthrough-n"),
    ],
)
async def test_a_setting_that_cannot_apply_is_refused_by_name(
    tmp_path: Path,
    fake_llm: FakeLLM,
    make_client: ClientFactory,
    provider: dict[str, Any],
    named: str,
) -> None:
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": document([provider])})
    assert response.status_code == 422, response.text
    assert named in response.json()["detail"]
    assert fake_llm.requests == []


async def test_keys_promptfoo_does_not_send_and_the_connection_are_named_in_warnings(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    provider = {
        "id": "openai:chat:x",
        "label": "gpt",
        "config": {"apiHost": "api.example.com", "apiKey": "sk-x", "max_output_tokens": 5},
    }
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/validate", json={"suite": document([provider])})
    assert response.status_code == 200, response.text
    warnings = "\n".join(response.json()["warnings"])
    assert "config.apiHost" in warnings
    assert "config.apiKey" in warnings
    assert "target's connection" in warnings
    assert "config.max_output_tokens" in warnings
    assert "does not send it either" in warnings
    assert "sk-x" not in response.text


async def test_a_grading_provider_objects_config_reaches_the_judge_calls(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    rubric = {"type": "llm-rubric", "value": "It greets Ada"}
    suite = yaml.safe_dump(
        {
            "prompts": ["Say hello to {{ who }}"],
            "providers": ["gpt"],
            "defaultTest": {
                "options": {
                    "provider": {"id": "claude", "config": {"temperature": 0.2, "max_tokens": 44}}
                }
            },
            "tests": [
                {"vars": {"who": "Ada"}, "assert": [rubric]},
                {
                    "vars": {"who": "Bob"},
                    "assert": [
                        {**rubric, "provider": {"id": "gemini", "config": {"topK": 4}}},
                        {**rubric, "config": {"temperature": 1}},  # promptfoo drops it
                    ],
                },
            ],
        }
    )
    await evaluate(tmp_path, fake_llm, make_client, suite)
    judged: list[RecordedRequest] = [r for r in fake_llm.requests if "It greets Ada" in str(r.json)]
    by_path = {r.path.split("/")[-1].split(":")[0]: r.json for r in judged}
    claude = [r.json for r in judged if r.path.endswith("/messages")]
    assert [(j["temperature"], j["max_tokens"]) for j in claude] == [(0.2, 44), (0.2, 44)]
    assert by_path["gemini-test"]["generationConfig"]["topK"] == 4
