"""Reading a promptfoo provider's ``config`` into model settings: nothing dropped quietly."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.providers.base import ModelOptions
from app.suites.documents.findings import Findings
from app.suites.prompts_vars.legacy_functions import legacy_functions
from app.suites.prompts_vars.provider_config import (
    API_FIELDS,
    SETTINGS,
    api_family,
    read_model_settings,
    tool_keys,
)
from app.suites.tool_callbacks import callback_keys
from app.suites.tool_use import TOOL_USE_KEYS


def read(config: dict[str, Any], provider_id: str) -> tuple[ModelOptions | None, Findings]:
    findings = Findings()
    return read_model_settings(config, provider_id, ("providers", 0, "config"), findings), findings


@pytest.mark.parametrize(
    ("provider_id", "family"),
    [
        ("openai:chat:gpt-4o", "chat"),
        ("openai:gpt-4.1", "chat"),
        ("azure:chat:dep", "chat"),
        ("openai:responses:gpt-5", "responses"),
        ("anthropic:messages:claude-sonnet-4-6", "anthropic"),
        ("bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic"),
        ("google:gemini-2.5-pro", "gemini"),
        ("vertex:gemini-2.5-flash", "gemini"),
        ("file://provider.py:call_api", "program"),
        ("quiverai:arrow-preview", None),
    ],
)
def test_the_api_a_provider_id_speaks(provider_id: str, family: str | None) -> None:
    assert api_family(provider_id) == family


def test_spellings_of_one_setting_are_one_option_and_api_fields_go_in_the_body() -> None:
    options, findings = read(
        {"max_completion_tokens": 9, "topP": 0.5, "stop": "##", "store": True}, "openai:chat:x"
    )
    assert findings.errors == []
    assert options == ModelOptions(
        max_output_tokens=9, top_p=0.5, stop=("##",), extra_body={"store": True}
    )


def test_geminis_generation_config_is_settings_and_body_fields() -> None:
    config = {"generationConfig": {"temperature": 0, "maxOutputTokens": 7, "candidateCount": 1}}
    options, findings = read(config, "google:gemini-2.5-pro")
    assert findings.errors == []
    assert options == ModelOptions(
        temperature=0, max_output_tokens=7, extra_body={"generationConfig": {"candidateCount": 1}}
    )


def test_geminis_response_schema_is_the_structured_output_it_asks_for() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert tool_keys({"responseSchema": schema}, "vertex:gemini-2.5-flash")["response_format"] == (
        schema
    )
    assert "response_format" not in tool_keys({"responseSchema": schema}, "openai:gpt-4o")
    options, findings = read({"responseSchema": schema}, "vertex:gemini-2.5-flash")
    assert (options, findings.errors, findings.warnings) == (None, [], [])


def test_a_custom_providers_config_is_named_in_a_warning_never_applied() -> None:
    options, findings = read({"temperature": 0.2, "someOption": 1}, "file://provider.py")
    assert options is None
    assert findings.errors == []
    assert len(findings.warnings) == 2
    assert all("custom provider" in warning for warning in findings.warnings)


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5000) | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)
_KEYS = st.sampled_from(
    [
        *SETTINGS,
        *("generationConfig", "passthrough", "store", "thinking", "apiKey", "headers"),
        *("showThinking", "modalities", "instructions", "cache_control", "n", "best_of"),
        *("output_format", "logit_bias", "service_tier"),
        *("functions", "function_call", "functionToolCallbacks"),
    ]
) | st.text(max_size=8)
_IDS = st.sampled_from(
    ["openai:chat:x", "openai:responses:x", "anthropic:x", "google:x", "file://p.py", "other:x"]
)


@given(st.dictionaries(_KEYS, _VALUES, max_size=6), _IDS)
def test_every_key_is_applied_or_named_never_dropped_quietly(
    config: dict[str, Any], provider_id: str
) -> None:
    options, findings = read(config, provider_id)
    if findings.errors:
        return  # the suite is refused, naming them: nothing runs
    body = (options.extra_body if options else None) or {}
    for key, value in config.items():
        held = (key, value) in (("showThinking", False), ("modalities", ["text"]))
        family = api_family(provider_id)
        read_as_tools = TOOL_USE_KEYS | legacy_functions(family) | callback_keys(family)
        if held or key in read_as_tools or f"config.{key}" in "\n".join(findings.warnings):
            continue
        if key in SETTINGS or key in ("generationConfig", "passthrough", "responseSchema"):
            continue  # options (the cases above); their invalid values are named errors
        placed = API_FIELDS.get(api_family(provider_id) or "", {}).get(key, (key,))[0]
        assert placed in body, (key, value, options)


def test_fields_go_where_promptfoo_puts_them_and_those_it_drops_are_named() -> None:
    schema = {"type": "json_schema", "schema": {"type": "object"}}
    options, findings = read({"output_format": schema, "seed": 3}, "anthropic:messages:x")
    assert options == ModelOptions(extra_body={"output_config": {"format": schema}})
    assert findings.warnings == [
        "providers[0].config.seed: not read: promptfoo's anthropic provider does not send it either"
    ]
    options, findings = read({"logit_bias": {"42": -1}}, "openai:chat:x")
    assert options is None
    assert "does not send it either" in findings.warnings[0]


def test_geminis_settings_read_as_promptfoo_sends_them() -> None:
    config = {
        "generationConfig": {"temperature": 0.4},
        "temperature": 0.9,
        "topK": 5,
        "seed": 4,
        "tool_config": {"function_calling_config": {"mode": "auto"}},
    }
    options, findings = read(config, "google:gemini-2.5-pro")
    assert options == ModelOptions(
        temperature=0.4,  # generationConfig wins, wherever it is written
        top_k=5,
        extra_body={"toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}},
    )
    assert [w.split(": ", 1)[0] for w in findings.warnings] == ["providers[0].config.seed"]


def test_extra_body_fields_never_replace_what_the_adapter_wrote() -> None:
    from app.formatting.messages import ChatMessage
    from app.providers.adapters.gemini import generate_content_body
    from app.providers.base import ProviderRequest

    extra = {
        "generationConfig": {"responseMimeType": "text/plain", "thinkingConfig": {"b": 0}},
        "contents": [],
        "safetySettings": [],
    }
    request = ProviderRequest(
        question="hi",
        chat_prompt=(ChatMessage(role="user", content="hi"),),
        options=ModelOptions(json_schema={"type": "object"}, extra_body=extra),
    )
    body, _ = generate_content_body(request, temperature=None, max_output_tokens=None)
    assert body["contents"] != []
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert body["generationConfig"]["thinkingConfig"] == {"b": 0}
    assert body["safetySettings"] == []
