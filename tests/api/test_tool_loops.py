"""A two-step tool loop graded on its trajectory, end to end through ``/evaluate``, per provider.

The candidate (the fake server, scripted) calls ``get_weather``, then ``convert`` with the
first result, then answers; the suite's canned results answer each call. Every request is
checked against its API's published shape by the fake server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.errors import TargetsFileError
from app.settings import Settings
from app.settings.response_format import read_response_format
from app.settings.targets import parse_target
from testkit.fake_llm import FakeLLM
from testkit.tool_replies import ToolLoop
from tests.conftest import ClientFactory, wait_for_run

KEY = "sk-test-key-0123456789"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city, in Celsius.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"], "additionalProperties": False},
    },
}  # fmt: skip
CONVERT = {
    "name": "convert",
    "input_schema": {"type": "object", "properties": {"celsius": {"type": "number"}},
                     "required": ["celsius"]},
}  # fmt: skip
STEPS = [
    [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_w"}],
    [{"name": "convert", "arguments": {"celsius": 21}, "id": "call_c"}],
]
FINAL = "It is 69.8 F and sunny in Paris."

TARGETS: dict[str, dict[str, Any]] = {
    "gpt": {"provider": "openai", "model": "gpt-test", "base_url": "{url}/v1"},
    "azure": {"provider": "azure", "endpoint": "{url}", "deployment": "dep",
              "version": "2024-10-21"},
    "responses": {"provider": "openai", "api_format": "responses", "model": "gpt-test",
                  "base_url": "{url}/v1"},
    "claude": {"provider": "anthropic", "model": "claude-test", "base_url": "{url}"},
    "gemini": {"provider": "gemini", "model": "gemini-test", "base_url": "{url}"},
}  # fmt: skip


def weather_suite() -> dict[str, Any]:
    return {
        "name": "tools",
        "tests": [{
            "id": "paris",
            "input": "What is the weather in Paris, in Fahrenheit?",
            "tools": [WEATHER, CONVERT],
            "tool_results": [
                {"tool": "get_weather", "args": {"city": "Paris"}, "result": {"celsius": 21}},
                {"tool": "get_weather", "result": {"error": "unknown city"}},
                {"tool": "convert", "result": "69.8"},
            ],
            "max_turns": 4,
            "assertions": [
                {"name": "trajectory", "type": "tool_trajectory", "mode": "exact",
                 "expected": [{"tool": "get_weather", "args": {"city": "Paris"}},
                              {"tool": "convert", "args": {"celsius": 21}}]},
                {"name": "sequence", "type": "trajectory:tool-sequence",
                 "value": {"steps": ["get_weather", "convert"], "mode": "exact"}},
                {"name": "used", "type": "trajectory:tool-used", "value": "get_weather"},
                {"name": "args", "type": "trajectory:tool-args-match",
                 "value": {"name": "get_weather", "args": {"city": "Paris"}}},
                {"name": "steps", "type": "trajectory:step-count", "value": {"min": 2, "max": 2}},
                {"name": "valid", "type": "is-valid-openai-tools-call"},
                {"name": "answer", "type": "contains", "value": "69.8"},
            ],
        }],
    }  # fmt: skip


def settings_for(tmp_path: Path, fake: FakeLLM) -> Settings:
    entries = []
    for name, entry in TARGETS.items():
        filled = {k: v.format(url=fake.url) if isinstance(v, str) else v for k, v in entry.items()}
        entries.append({"name": name, "api_key": KEY, **filled})
    return Settings.model_validate({"data_dir": tmp_path / "data", "targets": entries})


@pytest.mark.parametrize("target", list(TARGETS))
async def test_a_two_step_tool_loop_is_graded_on_its_trajectory(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str
) -> None:
    fake_llm.responder = ToolLoop(STEPS, FINAL)
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": weather_suite(), "target": target})
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    (record,) = response.json()["results"]
    grades = {e["name"]: (e["score"], e["verdict"]) for e in record["evaluator_results"]}
    assert all(verdict == "pass" for _, verdict in grades.values()), record["evaluator_results"]
    assert record["status"] == "passed"
    assert record["candidate_answer"] == FINAL
    calls = record["tool_calls"]
    assert [(c["tool"], c["input"], c["output"], c["step"]) for c in calls] == [
        ("get_weather", {"city": "Paris"}, {"celsius": 21}, 1),
        ("convert", {"celsius": 21}, "69.8", 2),
    ]
    steps = record["candidate_steps"]
    assert [s["tool_calls"] for s in steps] == [["get_weather"], ["convert"], []]
    assert len(fake_llm.requests) == 3 == record["attempts"]["candidate"]
    sent = [r.usage for r in fake_llm.requests]
    input_key = {
        "claude": "input_tokens",
        "responses": "input_tokens",
        "gemini": "promptTokenCount",
    }
    key = input_key.get(target, "prompt_tokens")
    assert record["usage"]["candidate"]["input_tokens"] == sum(u[key] for u in sent if u)
    assert [s["input_tokens"] for s in steps] == [u[key] for u in sent if u]


async def test_without_canned_results_the_first_reply_is_graded(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = ToolLoop(STEPS, FINAL)
    suite = weather_suite()
    del suite["tests"][0]["tool_results"]
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": suite, "target": "claude"})
    (record,) = response.json()["results"]
    assert len(fake_llm.requests) == 1
    assert [c["tool"] for c in record["tool_calls"]] == ["get_weather"]
    grades = {e["name"]: e["verdict"] for e in record["evaluator_results"]}
    assert grades["used"] == "pass"
    assert grades["valid"] == "pass"
    assert grades["sequence"] == "fail"
    assert grades["answer"] == "fail"


@pytest.mark.parametrize(("target", "field"), [
    ("gpt", "response_format"), ("responses", "text"), ("claude", "tool_choice"),
    ("gemini", "generationConfig"),
])  # fmt: skip
async def test_a_cases_response_format_is_sent_natively_and_the_answer_follows_it(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str, field: str
) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    suite = {"name": "structured", "tests": [{
        "id": "city", "input": "Which city is the capital of France?",
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "city", "schema": schema}},
        "assertions": [{"type": "is-json", "schema": schema}],
    }]}  # fmt: skip
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": suite, "target": target})
    assert response.status_code == 200, response.text
    (record,) = response.json()["results"]
    assert fake_llm.shape_errors == []
    assert field in fake_llm.requests[0].json
    assert record["status"] == "passed", record
    assert record["tool_calls"] == []


CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


@pytest.mark.parametrize(("target", "field"), [
    ("gpt", "response_format"), ("azure", "response_format"), ("responses", "text"),
    ("claude", "tools"), ("gemini", "generationConfig"),
])  # fmt: skip
async def test_a_targets_response_format_is_sent_natively_and_a_cases_own_wins(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str, field: str
) -> None:
    settings = settings_for(tmp_path, fake_llm)
    declared = {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY}}
    settings = settings.model_copy(
        update={
            "targets": [
                t.model_copy(update={"response_format": read_response_format(declared)})
                if t.name == target
                else t
                for t in settings.targets
            ]
        }
    )
    own = {"type": "object", "properties": {"country": {"type": "string"}}}
    suite = {"name": "structured", "tests": [
        {"id": "city", "input": "Which city is the capital of France?",
         "assertions": [{"type": "is-json", "schema": CITY}]},
        {"id": "own", "input": "Which country is Paris in?",
         "response_format": {"type": "json_schema", "json_schema": {"name": "own", "schema": own}},
         "assertions": [{"type": "is-json", "schema": own}]},
    ]}  # fmt: skip
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": suite, "target": target})
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    records = {r["eval_id"]: r for r in response.json()["results"]}
    assert all(r["status"] == "passed" for r in records.values()), records
    sent = {
        "city" if "capital" in r.messages_text() else "own": json.dumps(r.json[field])
        for r in fake_llm.requests
    }
    assert '"city"' in sent["city"]  # the target's schema
    assert '"country"' in sent["own"]  # the case's own, not the target's
    assert '"city"' not in sent["own"]


def test_a_targets_response_format_is_read_in_every_form_and_refused_by_name() -> None:
    def target(shape: object) -> Any:
        entry = {"name": "t", "provider": "openai", "model": "m", "response_format": shape}
        return parse_target(entry, {})

    wrapped = {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY}}
    assert target(wrapped).response_format.name == "city"
    assert target(CITY).response_format.schema_ == CITY  # a bare JSON Schema
    assert target({"type": "json_object"}).response_format.schema_ == {"type": "object"}
    assert target({"type": "text"}).response_format is None
    with pytest.raises(TargetsFileError, match=r"target .t.*response_format.*not a list"):
        target([CITY])


async def test_the_case_page_lists_the_calls_their_steps_and_marks_bad_arguments(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    bad = {"name": "get_weather", "arguments": '{"city": Par', "id": "call_bad"}
    fake_llm.responder = ToolLoop([[*STEPS[0], bad], STEPS[1]], FINAL)
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        created = await client.post("/runs", json={"suite": weather_suite(), "target": "gpt"})
        run_id = created.json()["id"]
        await wait_for_run(client, run_id)
        page = (await client.get(f"/ui/fragments/runs/{run_id}/cases/0")).text
    assert fake_llm.shape_errors == []
    section = page[
        page.index('id="tool-calls"') : page.index("</section>", page.index('id="tool-calls"'))
    ]
    assert section.count('class="card tool-call"') == 3
    assert "arguments do not parse: arguments are not JSON" in section
    assert "{&#34;city&#34;: Par" in section
    assert 'id="candidate-steps"' in section
    assert section.count("<tr><td>") == 3


async def test_tools_and_a_mock_tool_file_are_read_from_files(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = ToolLoop(STEPS, FINAL)
    suite = weather_suite()
    test = suite["tests"][0]
    files = {
        "tools.yaml": json.dumps(test["tools"]),
        "mocks/weather.yaml": json.dumps(test["tool_results"]),
    }
    test["tools"], test["tool_results"] = "file://tools.yaml", "file://mocks/weather.yaml"
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate", json={"suite": suite, "target": "gemini", "files": files}
        )
        missing = await client.post(
            "/evaluate", json={"suite": suite, "target": "gemini", "files": {}}
        )
    assert response.status_code == 200, response.text
    (record,) = response.json()["results"]
    assert record["status"] == "passed"
    assert [c["output"] for c in record["tool_calls"]] == [{"celsius": 21}, "69.8"]
    assert missing.status_code == 422
    assert "mocks/weather.yaml" in missing.text


async def test_promptfoos_provider_config_gives_the_tools(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = ToolLoop(STEPS[:1], FINAL)
    suite = {
        "prompts": ["{{ question }}"],
        "providers": [{"id": "openai:chat:gpt-test", "label": "gpt",
                       "config": {"tools": [WEATHER], "tool_choice": "auto", "temperature": 0}}],
        "tests": [{"vars": {"question": "Weather in Paris?"},
                   "assert": [{"type": "is-valid-openai-tools-call"},
                              {"type": "trajectory:tool-used", "value": "get_weather"}]}],
    }  # fmt: skip
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        checked = await client.post("/validate", json={"suite": suite})
        response = await client.post("/evaluate", json={"suite": suite})
    assert response.status_code == 200, response.text
    assert checked.json()["warnings"] == []  # temperature is applied: nothing to warn about
    (record,) = response.json()["results"]
    assert record["target"] == "gpt"
    assert record["status"] == "passed", record
    assert fake_llm.requests[0].json["tool_choice"] == "auto"
    assert fake_llm.requests[0].json["temperature"] == 0
    assert json.loads(record["candidate_answer"])[0]["function"]["name"] == "get_weather"


async def test_an_agent_target_given_tools_is_a_case_error_naming_it(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    agent = {"name": "agent", "provider": "cli", "command": "echo hello"}
    settings = Settings.model_validate({"data_dir": tmp_path / "data", "targets": [agent]})
    async with make_client(settings) as client:
        response = await client.post(
            "/evaluate", json={"suite": weather_suite(), "target": "agent"}
        )
    (record,) = response.json()["results"]
    assert record["status"] == "error"
    assert "is an agent: it takes no tools" in record["error"]
