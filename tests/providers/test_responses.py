"""The OpenAI Responses API adapter over real HTTP against the fake server."""

from __future__ import annotations

import json

from app.providers.base import CallRole, ModelOptions
from testkit.fake_llm import Reply
from tests.providers.conftest import VERDICT_SCHEMA, multi_turn_prompt, openai_target, request_for


def _target(url: str, **extra: object) -> dict[str, object]:
    return openai_target(url, name="resp", api_format="responses", **extra)


async def test_responses_adapter_posts_instructions_and_input_items(fake_llm, make_registry):
    registry = make_registry([_target(fake_llm.url, reasoning_effort="low", max_output_tokens=99)])
    reply = await registry.get("resp").complete(request_for(multi_turn_prompt()))
    [sent] = fake_llm.requests
    assert fake_llm.shape_errors == []
    assert sent.path == "/v1/responses"
    assert sent.json["instructions"].startswith("Be brief.")
    assert [item["role"] for item in sent.json["input"]] == [
        "user", "user", "assistant", "user", "user",
    ]  # fmt: skip
    assert sent.json["reasoning"] == {"effort": "low"}
    assert sent.json["max_output_tokens"] == 99
    assert "messages" not in sent.json
    assert reply.text == "And now?"
    assert reply.finish_reason == "stop"  # completed, normalised
    assert reply.usage.input_tokens
    assert reply.usage.output_tokens == 2


async def test_provider_name_and_promptfoo_id_pick_the_responses_wire(fake_llm, make_registry):
    target = openai_target(fake_llm.url, name="r2", provider="openai-responses")
    registry = make_registry([target])
    await registry.get("r2").complete(request_for())
    assert fake_llm.requests[0].path == "/v1/responses"


async def test_a_reply_cut_at_the_budget_reads_as_length(fake_llm, make_registry):
    registry = make_registry([_target(fake_llm.url)])
    fake_llm.script(Reply(text="word " * 40))
    request = request_for().model_copy(update={"options": ModelOptions(max_output_tokens=20)})
    reply = await registry.get("resp").complete(request)
    assert reply.cut_at_budget


async def test_judge_structured_output_is_text_format_json_schema(fake_llm, make_registry):
    registry = make_registry([_target(fake_llm.url)])
    reply = await registry.get("resp").complete(
        request_for(role=CallRole.JUDGE, schema=VERDICT_SCHEMA)
    )
    sent = fake_llm.requests[0].json
    assert fake_llm.shape_errors == []
    assert sent["text"]["format"]["type"] == "json_schema"
    assert sent["text"]["format"]["strict"] is True
    assert json.loads(reply.text)["score"] == 1.0


async def test_judge_structured_output_as_a_forced_tool(fake_llm, make_registry):
    registry = make_registry([_target(fake_llm.url, structured_output="tool")])
    reply = await registry.get("resp").complete(
        request_for(role=CallRole.JUDGE, schema=VERDICT_SCHEMA)
    )
    sent = fake_llm.requests[0].json
    assert sent["tool_choice"] == {"type": "function", "name": "verdict"}
    assert reply.tool_calls == ()
    assert json.loads(reply.text)["score"] == 1.0
