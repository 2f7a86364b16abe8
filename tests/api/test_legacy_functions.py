"""OpenAI's legacy ``functions``/``function_call`` in a promptfoo provider's config, per API.

promptfoo's ``openai-function-call`` example, end to end through ``/evaluate`` on the
harness's fake (``CALL:<name>:<arguments>:END`` prompts): an OpenAI Chat target gets the
functions as ``functions``/``function_call`` and answers with a legacy ``function_call``;
every other API gets them as its own tools; the output is the call's ``{name, arguments}``
either way, read as the example reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scripts.conformance.promptfoo.fake import respond
from testkit.fake_llm import FakeLLM
from tests.api.test_tool_loops import TARGETS, settings_for
from tests.conftest import ClientFactory

WEATHER = {
    "name": "get_current_weather",
    "description": "Get the current weather in a given location",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string"},
                       "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"],
    },
}  # fmt: skip
EXAMPLE_ASSERTS = [
    {"type": "is-json"},
    {"type": "is-valid-openai-function-call"},
    {"type": "javascript", "value": "output.name === 'get_current_weather'"},
    {"type": "javascript", "value": "JSON.parse(output.arguments).location === 'Boston, MA'"},
    {"type": "equals", "value": "get_current_weather", "transform": "output.name"},
]


def suite(target: str, config: dict[str, Any], *tests: dict[str, Any]) -> dict[str, Any]:
    return {
        "description": "legacy functions",
        "prompts": ["CALL:{{name}}:{{arguments}}:END"],
        "providers": [{"id": "openai:chat:gpt-4.1-mini", "label": target, "config": config}],
        "tests": list(tests),
    }


def call(arguments: str, *asserts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"vars": {"name": "get_current_weather", "arguments": arguments},
            "assert": list(asserts), **extra}  # fmt: skip


@pytest.mark.parametrize("target", list(TARGETS))
async def test_the_examples_function_call_output_is_read_as_promptfoo_reads_it(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str
) -> None:
    fake_llm.responder = respond
    config = {"functions": [WEATHER], "function_call": "auto"}
    valid = call('{"location": "Boston, MA"}', *EXAMPLE_ASSERTS)
    missing = call('{"unit": "celsius"}', {"type": "is-valid-openai-function-call"})
    body = {"suite": suite(target, config, valid, missing)}
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    valid, missing = response.json()["results"]
    assert valid["candidate_answer"] == (
        '{"name":"get_current_weather","arguments":"{\\"location\\": \\"Boston, MA\\"}"}'
    )
    assert [e["passed"] for e in valid["evaluator_results"]] == [True] * 5, valid
    assert [e["passed"] for e in missing["evaluator_results"]] == [False]
    assert "location" in str(missing["evaluator_results"][0]["misses"])
    sent = fake_llm.requests[0].json
    if target in ("gpt", "azure"):
        assert sent["functions"] == [WEATHER]
        assert sent["function_call"] == "auto"
        assert "tools" not in sent
        assert "tool_choice" not in sent
    else:
        assert "functions" not in sent
        assert "get_current_weather" in json.dumps(sent["tools"])


async def test_a_legacy_tool_loop_sends_function_turns_back(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = respond
    results = {"tool_results": {"get_current_weather": {"celsius": 21}}, "max_turns": 2}
    test = call('{"location": "Oslo"}', {"type": "is-json"}, **results)
    body = {"suite": suite("gpt", {"functions": [WEATHER]}, test)}
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    (record,) = response.json()["results"]
    second = fake_llm.requests[1].json["messages"]
    assert second[-2:] == [
        {"role": "assistant", "content": None,
         "function_call": {"name": "get_current_weather", "arguments": '{"location": "Oslo"}'}},
        {"role": "function", "name": "get_current_weather", "content": '{"celsius": 21}'},
    ]  # fmt: skip
    assert [c["output"] for c in record["tool_calls"]] == [{"celsius": 21}, {"celsius": 21}]


@pytest.mark.parametrize(("config", "field", "said"), [
    ({"functions": [WEATHER], "tools": [{"type": "function", "function": WEATHER}]},
     "functions", "not both"),
    ({"functions": [WEATHER], "function_call": "required"}, "function_call", "'required'"),
])  # fmt: skip
async def test_legacy_functions_that_cannot_be_sent_are_refused_by_name(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory,
    config: dict[str, Any], field: str, said: str,
) -> None:  # fmt: skip
    body = {"suite": suite("gpt", config, call("{}"))}
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 422, response.text
    assert f"providers/0/config/{field}" in response.text or field in response.text
    assert said in response.text
    assert fake_llm.requests == []


async def test_legacy_functions_on_another_apis_promptfoo_provider_are_refused_by_name(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    body = {"suite": suite("claude", {"functions": [WEATHER]}, call("{}"))}
    body["suite"]["providers"][0]["id"] = "anthropic:messages:claude-sonnet-4"
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 422, response.text
    assert "'functions'" in response.text
