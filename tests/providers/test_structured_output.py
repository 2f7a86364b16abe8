"""Structured output per target: each form on each wire, and ``auto``'s one fallback."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from app.errors import TargetsFileError
from app.providers.base import CallRole, ProviderRequest
from app.providers.errors import ProviderRejected, ProviderUnavailable
from app.providers.runtime import TargetRuntime
from app.providers.structured_output.structured import (
    SCHEMA_INSTRUCTION,
    StructuredOutputState,
    next_form,
)
from testkit.fake_llm import (
    JUDGE_MARKER,
    LLAMA_CPP_PYTHON_REFUSAL,
    MODES,
    FakeLLM,
    RecordedRequest,
    error,
)
from tests.providers.conftest import (
    VERDICT_SCHEMA,
    RegistryFactory,
    anthropic_target,
    azure_target,
    gemini_target,
    openai_target,
    parse_targets,
    request_for,
)


def judge_request() -> ProviderRequest:
    question = f"Grade this.\n\n{JUDGE_MARKER}\n4"
    return request_for(schema=VERDICT_SCHEMA, role=CallRole.JUDGE, question=question)


def negotiated(runtime: TargetRuntime) -> StructuredOutputState:
    state = runtime.describe().structured_output
    assert state is not None
    return state


def response_format_type(recorded: RecordedRequest) -> str | None:
    response_format = recorded.json.get("response_format")
    return response_format.get("type") if isinstance(response_format, dict) else None


def system_text(recorded: RecordedRequest) -> str:
    return str(recorded.json["messages"][0]["content"])


async def test_auto_falls_back_to_json_object_when_json_schema_is_refused_like_llama_cpp_python(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    fake_llm.responder = MODES["refuse-json-schema"]
    registry = make_registry([openai_target(fake_llm.url)])
    runtime = registry.get("gpt")

    replies = await asyncio.gather(*(runtime.complete(judge_request()) for _ in range(6)))

    assert len(fake_llm.requests) == 6 + 1  # one extra request for the whole target
    forms = [response_format_type(r) for r in fake_llm.requests]
    assert forms == ["json_schema"] + ["json_object"] * 6
    assert fake_llm.requests[0].status == 500
    for recorded in fake_llm.requests[1:]:
        assert recorded.json["response_format"]["schema"]["required"] == VERDICT_SCHEMA["required"]
        assert SCHEMA_INSTRUCTION in system_text(recorded)
    assert all(json.loads(reply.text)["score"] == 1.0 for reply in replies)
    assert [a.outcome for a in replies[0].attempts] == ["provider-unavailable", "ok"]
    state = negotiated(runtime)
    assert (state.setting, state.form) == ("auto", "json_object")
    assert state.fallback_reason is not None
    assert "Input should be 'text' or 'json_object'" in state.fallback_reason


async def test_auto_falls_back_to_the_prompt_when_any_response_format_is_refused(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    fake_llm.responder = MODES["refuse-response-format"]
    runtime = make_registry([openai_target(fake_llm.url)]).get("gpt")

    replies = await asyncio.gather(*(runtime.complete(judge_request()) for _ in range(4)))

    assert len(fake_llm.requests) == 4 + 1
    assert [response_format_type(r) for r in fake_llm.requests] == ["json_schema"] + [None] * 4
    assert all(SCHEMA_INSTRUCTION in system_text(r) for r in fake_llm.requests[1:])
    assert all(json.loads(reply.text)["score"] == 1.0 for reply in replies)
    assert negotiated(runtime).form == "none"


async def test_the_one_fallback_is_final_and_later_calls_skip_the_refused_form(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    runtime = make_registry([openai_target(fake_llm.url)]).get("gpt")
    fake_llm.script(error(500, "Input should be 'text' or 'json_object'"))
    await runtime.complete(judge_request())
    fake_llm.script(error(400, "response_format json_object is not supported"))

    with pytest.raises(ProviderRejected) as caught:
        await runtime.complete(judge_request())

    assert [response_format_type(r) for r in fake_llm.requests] == [
        "json_schema", "json_object", "json_object",
    ]  # fmt: skip
    assert "1 try" in caught.value.detail
    assert negotiated(runtime).form == "json_object"


async def test_a_refusal_is_not_retried_and_an_explicit_form_never_changes(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    fake_llm.responder = MODES["refuse-json-schema"]
    target = openai_target(fake_llm.url, structured_output="json_schema")
    runtime = make_registry([target]).get("gpt")

    with pytest.raises(ProviderUnavailable) as caught:
        await runtime.complete(judge_request())

    assert len(fake_llm.requests) == 1  # a 500 that names response_format is not retried
    assert "Input should be 'text' or 'json_object'" in caught.value.detail
    assert negotiated(runtime).form == "json_schema"


async def test_an_unrelated_client_error_does_not_change_the_form(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    runtime = make_registry([openai_target(fake_llm.url)]).get("gpt")
    fake_llm.script(error(400, "This model's maximum context length is 2048 tokens"))

    with pytest.raises(ProviderRejected):
        await runtime.complete(judge_request())
    await runtime.complete(judge_request())

    assert [response_format_type(r) for r in fake_llm.requests] == ["json_schema"] * 2
    assert negotiated(runtime).fallback_reason is None


async def test_candidate_calls_carry_no_structured_output(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    fake_llm.responder = MODES["refuse-json-schema"]
    runtime = make_registry([openai_target(fake_llm.url)]).get("gpt")
    reply = await runtime.complete(request_for())
    assert reply.text == "What is 2+2?"
    assert "response_format" not in fake_llm.requests[0].json
    assert negotiated(runtime).form == "json_schema"


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("json_schema", {"response_format": "json_schema"}),
        ("json_object", {"response_format": "json_object", "schema_field": True}),
        ("tool", {"tool_choice": "verdict"}),
        ("none", {}),
    ],
)
async def test_each_openai_form_round_trips_over_http(
    fake_llm: FakeLLM, make_registry: RegistryFactory, form: str, expected: dict[str, Any]
) -> None:
    runtime = make_registry([openai_target(fake_llm.url, structured_output=form)]).get("gpt")
    reply = await runtime.complete(judge_request())

    sent = fake_llm.requests[0].json
    assert response_format_type(fake_llm.requests[0]) == expected.get("response_format")
    assert ("schema" in sent.get("response_format", {})) == expected.get("schema_field", False)
    tool_choice = sent.get("tool_choice", {}).get("function", {}).get("name")
    assert tool_choice == expected.get("tool_choice")
    assert (SCHEMA_INSTRUCTION in system_text(fake_llm.requests[0])) == (
        form in ("json_object", "none")
    )
    assert json.loads(reply.text)["score"] == 1.0


def test_azure_and_openai_json_mode_do_not_send_the_schema_field(
    make_registry: RegistryFactory,
) -> None:
    registry = make_registry(
        [
            azure_target("http://127.0.0.1:9", structured_output="json_object"),
            {**openai_target("https://api.openai.com/v1", structured_output="json_object"),
             "name": "official"},
        ]
    )  # fmt: skip
    for name in ("az", "official"):
        body = registry.preview([name], judge_request())[name].body
        assert body["response_format"] == {"type": "json_object"}
        assert SCHEMA_INSTRUCTION in body["messages"][0]["content"]


async def test_anthropic_forced_tool_or_prompt_only(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    registry = make_registry(
        [anthropic_target(fake_llm.url),
         {**anthropic_target(fake_llm.url, structured_output="none"), "name": "plain"}]
    )  # fmt: skip
    tool_reply = await registry.get("claude").complete(judge_request())
    plain_reply = await registry.get("plain").complete(judge_request())

    tool_body, plain_body = (r.json for r in fake_llm.requests)
    assert tool_body["tool_choice"] == {"type": "tool", "name": "verdict"}
    assert "tools" not in plain_body
    assert SCHEMA_INSTRUCTION in plain_body["system"]
    assert json.loads(tool_reply.text)["score"] == 1.0
    assert json.loads(plain_reply.text)["score"] == 1.0


@pytest.mark.parametrize(
    ("form", "mime", "has_schema"),
    [("json_schema", True, True), ("json_object", True, False), ("none", False, False)],
)
async def test_gemini_forms(
    fake_llm: FakeLLM, make_registry: RegistryFactory, form: str, mime: bool, has_schema: bool
) -> None:
    runtime = make_registry([gemini_target(fake_llm.url, structured_output=form)]).get("gem")
    reply = await runtime.complete(judge_request())

    config = fake_llm.requests[0].json.get("generationConfig", {})
    assert ("responseMimeType" in config) == mime
    assert ("responseSchema" in config) == has_schema
    assert json.loads(reply.text)["score"] == 1.0


async def test_gemini_auto_falls_back_from_response_schema_to_json_mode(
    fake_llm: FakeLLM, make_registry: RegistryFactory
) -> None:
    runtime = make_registry([gemini_target(fake_llm.url)]).get("gem")
    fake_llm.script(error(400, 'Invalid JSON payload: Unknown name "responseSchema"'))
    await runtime.complete(judge_request())
    configs = [r.json["generationConfig"] for r in fake_llm.requests]
    assert ["responseSchema" in c for c in configs] == [True, False]
    assert configs[1]["responseMimeType"] == "application/json"


@pytest.mark.parametrize(
    ("provider", "value"),
    [("anthropic", "json_object"), ("anthropic", "json_schema"), ("gemini", "tool"),
     ("openai", "xml")],
)  # fmt: skip
def test_a_form_a_provider_does_not_have_is_a_targets_file_error(provider: str, value: str) -> None:
    makers = {"anthropic": anthropic_target, "gemini": gemini_target, "openai": openai_target}
    with pytest.raises(TargetsFileError) as caught:
        parse_targets([makers[provider]("http://127.0.0.1:9", structured_output=value)])
    assert "structured_output" in caught.value.detail


@pytest.mark.parametrize(
    ("provider", "message", "expected"),
    [
        ("openai", LLAMA_CPP_PYTHON_REFUSAL, "json_object"),
        ("openai", 'response_format type must be one of "text" or "json_object", but got: '
                   "json_schema", "json_object"),  # llama.cpp's server before json_schema
        ("azure", "response_format value as json_schema is enabled only for api versions "
                  "2024-08-01-preview and later", "json_object"),
        ("openai", "Unrecognized request argument supplied: response_format", "none"),
        ("gemini", 'Unknown name "responseSchema" at generation_config', "json_object"),
        ("gemini", 'Unknown name "responseMimeType"', "none"),
    ],
)  # fmt: skip
def test_next_form_reads_what_the_refusal_says(provider: str, message: str, expected: str) -> None:
    assert next_form(provider, "json_schema", message) == expected


def test_after_json_mode_or_a_tool_only_the_prompt_is_left() -> None:
    assert next_form("openai", "json_object", "json_object unsupported") == "none"
    assert next_form("anthropic", "tool", "tool_choice unsupported") == "none"
    assert next_form("openai", "none", "anything") is None
