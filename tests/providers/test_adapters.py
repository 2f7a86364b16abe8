"""Each adapter against the fake LLM server over real HTTP: URL, headers, body, reply."""

from __future__ import annotations

import json

import pytest

from app.providers.base import CallRole
from app.providers.errors import ProviderRejected, ProviderResponseInvalid
from testkit.fake_llm import Reply, error
from tests.providers.conftest import (
    FAKE_KEY,
    VERDICT_SCHEMA,
    anthropic_target,
    azure_target,
    gemini_target,
    multi_turn_prompt,
    openai_target,
    request_for,
)


async def test_openai_adapter_posts_chat_completions_with_bearer_key(fake_llm, make_registry):
    registry = make_registry([openai_target(fake_llm.url, temperature=0.3)])
    reply = await registry.get("gpt").complete(request_for(multi_turn_prompt()))
    [sent] = fake_llm.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert sent.json["model"] == "gpt-test"
    assert sent.json["temperature"] == 0.3
    assert [m["role"] for m in sent.json["messages"]] == [
        "system", "user", "user", "assistant", "user", "user",
    ]  # fmt: skip
    assert reply.text == "And now?"
    assert reply.model == "gpt-test"
    assert reply.finish_reason == "stop"
    assert reply.usage.input_tokens
    assert reply.usage.output_tokens == 2
    assert reply.raw["choices"][0]["message"]["content"] == "And now?"
    assert reply.latency_ms > 0


async def test_openai_compatible_server_without_key_gets_no_authorization_and_max_tokens(
    fake_llm, make_registry
):
    target = openai_target(fake_llm.url, max_output_tokens=50)
    del target["api_key"]
    registry = make_registry([target])
    await registry.get("gpt").complete(request_for())
    [sent] = fake_llm.requests
    assert "authorization" not in sent.headers
    assert sent.json["max_tokens"] == 50
    assert "max_completion_tokens" not in sent.json


async def test_azure_adapter_calls_the_deployment_with_api_version_and_api_key(
    fake_llm, make_registry
):
    registry = make_registry([azure_target(fake_llm.url)])
    reply = await registry.get("az").complete(request_for(multi_turn_prompt()))
    [sent] = fake_llm.requests
    assert sent.path == "/openai/deployments/dep-1/chat/completions"
    assert sent.query == "api-version=2024-10-21"
    assert sent.headers["api-key"] == FAKE_KEY
    assert "authorization" not in sent.headers
    assert "model" not in sent.json
    assert reply.text == "And now?"


async def test_anthropic_adapter_sends_messages_with_version_header(fake_llm, make_registry):
    registry = make_registry([anthropic_target(fake_llm.url)])
    reply = await registry.get("claude").complete(request_for(multi_turn_prompt()))
    [sent] = fake_llm.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == FAKE_KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.json["system"].startswith("Be brief.")
    assert [m["role"] for m in sent.json["messages"]] == ["user", "assistant", "user"]
    assert sent.json["max_tokens"] == 4096
    assert reply.text.endswith("And now?")
    assert reply.finish_reason == "stop"  # end_turn, normalised
    assert reply.usage.output_tokens is not None


async def test_gemini_adapter_sends_key_in_header_never_in_url(fake_llm, make_registry):
    registry = make_registry([gemini_target(fake_llm.url)])
    reply = await registry.get("gem").complete(request_for(multi_turn_prompt()))
    [sent] = fake_llm.requests
    assert sent.path == "/v1beta/models/gemini-test:generateContent"
    assert sent.query == ""
    assert sent.headers["x-goog-api-key"] == FAKE_KEY
    assert [c["role"] for c in sent.json["contents"]] == ["user", "model", "user"]
    assert "systemInstruction" in sent.json
    assert reply.text.endswith("And now?")
    assert reply.finish_reason == "stop"  # STOP, normalised
    assert reply.model == "gemini-test"


@pytest.mark.parametrize(
    "make_target", [openai_target, azure_target, anthropic_target, gemini_target],
    ids=["openai", "azure", "anthropic", "gemini"],
)  # fmt: skip
async def test_judge_call_with_schema_returns_the_structured_json(
    fake_llm, make_registry, make_target
):
    target = make_target(fake_llm.url)
    registry = make_registry([target])
    reply = await registry.get(target["name"]).complete(
        request_for(role=CallRole.JUDGE, schema=VERDICT_SCHEMA)
    )
    verdict = json.loads(reply.text)
    assert verdict["score"] == 1.0
    assert verdict["misses"] == []


@pytest.mark.parametrize(
    "make_target", [openai_target, azure_target, anthropic_target, gemini_target],
    ids=["openai", "azure", "anthropic", "gemini"],
)  # fmt: skip
async def test_bad_request_is_rejected_with_the_provider_message_after_one_request(
    fake_llm, make_registry, make_target
):
    target = make_target(fake_llm.url)
    registry = make_registry([target])
    fake_llm.script(error(400, "messages: roles must alternate"))
    with pytest.raises(ProviderRejected) as caught:
        await registry.get(target["name"]).complete(request_for())
    assert len(fake_llm.requests) == 1
    assert caught.value.upstream_status == 400
    assert target["name"] in caught.value.detail
    assert "roles must alternate" in caught.value.detail


async def test_malformed_body_is_a_response_invalid_error(fake_llm, make_registry):
    registry = make_registry([openai_target(fake_llm.url)])
    fake_llm.script(Reply(malformed=True))
    with pytest.raises(ProviderResponseInvalid) as caught:
        await registry.get("gpt").complete(request_for())
    assert "'gpt'" in caught.value.detail
    assert caught.value.status == 502


async def test_reply_of_the_wrong_shape_is_a_response_invalid_error(fake_llm, make_registry):
    registry = make_registry([anthropic_target(fake_llm.url)])
    fake_llm.script(Reply(body={"type": "message", "content": "not a list"}))
    with pytest.raises(ProviderResponseInvalid):
        await registry.get("claude").complete(request_for())


async def test_a_cookie_a_provider_sets_is_not_sent_with_later_calls(fake_llm, make_registry):
    fake_llm.responder = lambda _: Reply(headers={"set-cookie": "session=abc; Path=/"})
    # By a host name: cookie jars keep no cookie of a bare IP address anyway.
    url = fake_llm.url.replace("127.0.0.1", "localhost")
    runtime = make_registry([openai_target(url)]).get("gpt")
    await runtime.complete(request_for())
    await runtime.complete(request_for())
    assert [sent.headers.get("cookie") for sent in fake_llm.requests] == [None, None]
