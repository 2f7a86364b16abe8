"""``finish-reason`` and ``is-valid-function-call`` end to end through ``/evaluate``, per API.

Each API says why its model stopped in its own words (``tool_use``, ``STOP`` with calls,
``completed``...); the record and the graders see promptfoo's normalised ones. The tools are
written in Gemini's ``functionDeclarations`` form, as promptfoo's Gemini examples write them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from testkit.fake_llm import FakeLLM, Reply
from tests.api.test_tool_loops import TARGETS, settings_for
from tests.conftest import ClientFactory

DECLARATIONS = [{
    "functionDeclarations": [{
        "name": "get_current_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "OBJECT", "properties": {"location": {"type": "STRING"}},
                       "required": ["location"]},
    }],
}]  # fmt: skip


def suite(*graders: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "finish",
        "tests": [{"id": "w", "input": "Weather in Paris?", "tools": DECLARATIONS,
                   "assertions": list(graders)}],
    }  # fmt: skip


GRADERS = (
    {"name": "calls", "type": "finish-reason", "value": "tool_calls"},
    {"name": "not-stop", "type": "not-finish-reason", "value": "stop"},
    {"name": "anthropic-word", "type": "finish-reason", "value": "tool_use"},
    {"name": "valid", "type": "is-valid-function-call"},
)


@pytest.mark.parametrize("target", list(TARGETS))
async def test_a_tool_call_stops_with_tool_calls_on_every_api(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str
) -> None:
    fake_llm.script(Reply(tool_calls=[{"name": "get_current_weather",
                                       "arguments": {"location": "Paris"}}]))  # fmt: skip
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": suite(*GRADERS), "target": target})
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    (record,) = response.json()["results"]
    passed = {e["name"]: e["passed"] for e in record["evaluator_results"]}
    assert passed == {"calls": True, "not-stop": True, "anthropic-word": False, "valid": True}
    assert record["candidate_steps"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("target", list(TARGETS))
async def test_a_text_answer_stops_with_stop_and_is_no_valid_call(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str
) -> None:
    fake_llm.script(Reply(text="It is sunny."))
    graders = (
        {"name": "stop", "type": "finish-reason", "value": "STOP"},
        {"name": "valid", "type": "is-valid-function-call"},
        {"name": "invalid", "type": "not-is-valid-function-call"},
    )
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": suite(*graders), "target": target})
    assert response.status_code == 200, response.text
    (record,) = response.json()["results"]
    passed = {e["name"]: e["passed"] for e in record["evaluator_results"]}
    assert passed == {"stop": True, "valid": False, "invalid": True}


async def test_a_call_outside_the_declared_schema_is_not_a_valid_function_call(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.script(Reply(tool_calls=[{"name": "get_current_weather",
                                       "arguments": {"city": "Paris"}}]))  # fmt: skip
    graders = ({"name": "valid", "type": "is-valid-function-call"},)
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        body = {"suite": suite(*graders), "target": "gemini"}
        response = await client.post("/evaluate", json=body)
    (record,) = response.json()["results"]
    (result,) = record["evaluator_results"]
    assert result["passed"] is False
    assert "location" in str(result["misses"])


async def test_a_gemini_call_is_read_as_promptfoos_gemini_examples_read_it(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    # promptfoo's google-aistudio-tools: tools from functionDeclarations, transforms reading
    # the Gemini parts promptfoo outputs for a reply made only of calls
    fake_llm.script(Reply(tool_calls=[{"name": "get_current_weather",
                                       "arguments": {"location": "Paris"}}]))  # fmt: skip
    document = {
        "prompts": ["What is the weather in {{location}}?"],
        "providers": [{"id": "gemini", "config": {"tools": DECLARATIONS}}],
        "tests": [{"vars": {"location": "Paris"}, "assert": [
            {"type": "is-valid-function-call"},
            {"type": "equals", "value": "get_current_weather",
             "transform": "output[0].functionCall.name"},
            {"type": "javascript", "value": "output[0].functionCall.args.location === 'Paris'"},
            {"type": "finish-reason", "value": "tool_calls"},
        ]}],
    }  # fmt: skip
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": document})
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    (record,) = response.json()["results"]
    assert [e["passed"] for e in record["evaluator_results"]] == [True] * 4, record
    assert record["status"] == "passed"
