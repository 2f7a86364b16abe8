"""Request bodies follow each API's documented rules on multi-turn chatPrompts (pure)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.formatting.messages import ChatMessage
from app.providers.adapters.anthropic import messages_body
from app.providers.adapters.gemini import generate_content_body
from app.providers.adapters.openai import chat_completions_body
from app.providers.messages.turns import TOOL_MARKER, alternating_conversation
from tests.providers.conftest import VERDICT_SCHEMA, multi_turn_prompt, request_for

ORIGINAL_CONTENTS = ["Start task", "Retry please", "Running the tool", '{"ok": true}', "And now?"]


def _in_order(haystack: str, needles: list[str]) -> bool:
    position = 0
    for needle in needles:
        found = haystack.find(needle, position)
        if found < 0:
            return False
        position = found + len(needle)
    return True


def test_openai_body_sends_tool_turn_as_user_with_marker_and_keeps_order():
    body, rewrites = chat_completions_body(
        request_for(multi_turn_prompt()), model="m", temperature=None, max_output_tokens=None
    )
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "user", "assistant", "user", "user"]
    assert body["messages"][0]["content"] == "Be brief.\n\nTool failed with error 500"
    assert body["messages"][4]["content"] == f'{TOOL_MARKER}\n{{"ok": true}}'
    assert rewrites == ["tool turn 5 sent as user with @[Tool]: marker"]
    joined = "\n".join(m["content"] for m in body["messages"])
    assert _in_order(joined, ORIGINAL_CONTENTS)


def test_anthropic_body_has_top_level_system_strict_alternation_and_max_tokens():
    body, rewrites = messages_body(
        request_for(multi_turn_prompt()), model="m", temperature=0.2, max_output_tokens=None
    )
    assert body["system"] == "Be brief.\n\nTool failed with error 500"
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert body["messages"][0]["content"] == "Start task\n\nRetry please"
    assert body["messages"][2]["content"] == f'{TOOL_MARKER}\n{{"ok": true}}\n\nAnd now?'
    assert body["max_tokens"] > 0
    assert body["temperature"] == 0.2
    assert rewrites == [
        "turns 2 and 3 merged: consecutive user",
        "tool turn 5 sent as user with @[Tool]: marker",
        "turns 5 and 6 merged: consecutive user",
    ]
    assert _in_order("\n".join(m["content"] for m in body["messages"]), ORIGINAL_CONTENTS)


def test_gemini_body_uses_system_instruction_and_user_model_roles():
    body, rewrites = generate_content_body(
        request_for(multi_turn_prompt()), temperature=None, max_output_tokens=64
    )
    assert body["systemInstruction"] == {
        "parts": [{"text": "Be brief.\n\nTool failed with error 500"}]
    }
    roles = [c["role"] for c in body["contents"]]
    assert roles == ["user", "model", "user"]
    assert body["generationConfig"] == {"maxOutputTokens": 64}
    assert len(rewrites) == 3
    text = "\n".join(c["parts"][0]["text"] for c in body["contents"])
    assert _in_order(text, ORIGINAL_CONTENTS)


@pytest.mark.parametrize("build", ["anthropic", "gemini"])
def test_conversation_starting_with_assistant_starts_with_a_user_turn(build):
    prompt = (
        ChatMessage(role="assistant", content="Hello, how can I help?"),
        ChatMessage(role="user", content="Fix the bug"),
    )
    if build == "anthropic":
        body, rewrites = messages_body(
            request_for(prompt), model="m", temperature=None, max_output_tokens=None
        )
        first = body["messages"][0]
        assert first["role"] == "user"
        text = first["content"]
    else:
        body, rewrites = generate_content_body(
            request_for(prompt), temperature=None, max_output_tokens=None
        )
        first = body["contents"][0]
        assert first["role"] == "user"
        text = first["parts"][0]["text"]
    assert text == "@[Assistant]:\nHello, how can I help?\n\nFix the bug"
    assert "assistant turn 1 sent as user" in rewrites[0]
    assert rewrites[1] == "turns 1 and 2 merged: consecutive user"


def test_system_only_prompt_sends_the_question_as_the_user_turn():
    prompt = (ChatMessage(role="system", content="Only system"),)
    body, rewrites = messages_body(
        request_for(prompt, question="Only system"), model="m", temperature=None,
        max_output_tokens=None,
    )  # fmt: skip
    assert body["messages"] == [{"role": "user", "content": "Only system"}]
    assert rewrites
    assert "question sent as the user turn" in rewrites[0]


def test_request_options_override_target_defaults():
    request = request_for().model_copy(
        update={"options": request_for().options.model_copy(update={"temperature": 0.0})}
    )
    body, _ = chat_completions_body(request, model="m", temperature=0.7, max_output_tokens=100)
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == 100


def test_openai_structured_output_uses_strict_json_schema():
    body, _ = chat_completions_body(
        request_for(schema=VERDICT_SCHEMA), model="m", temperature=None, max_output_tokens=None
    )
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    spec = response_format["json_schema"]
    assert spec["name"] == "verdict"
    assert spec["strict"] is True
    schema = spec["schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["score", "hits", "misses", "reasoning"]
    assert schema["properties"]["reasoning"]["type"] == ["string", "null"]


def test_anthropic_structured_output_forces_a_tool_with_the_schema():
    body, _ = messages_body(
        request_for(schema=VERDICT_SCHEMA), model="m", temperature=None, max_output_tokens=None
    )
    assert body["tools"][0]["name"] == "verdict"
    assert body["tools"][0]["input_schema"] == VERDICT_SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": "verdict"}


def test_gemini_structured_output_sets_mime_type_and_openapi_schema():
    schema = {
        "type": "object",
        "additionalProperties": False,
        "$defs": {"Item": {"type": "string"}},
        "properties": {
            "score": {"type": "number"},
            "note": {"type": ["string", "null"]},
            "hits": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        },
    }
    body, _ = generate_content_body(
        request_for(schema=schema), temperature=None, max_output_tokens=None
    )
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    converted = config["responseSchema"]
    assert "additionalProperties" not in converted
    assert converted["properties"]["note"] == {"type": "string", "nullable": True}
    assert converted["properties"]["hits"]["items"] == {"type": "string"}


_turn = st.tuples(
    st.sampled_from(["user", "assistant", "tool"]),
    st.text(alphabet="abcdefgh \n", min_size=1, max_size=12).map(lambda t: t.strip() or "x"),
)


@settings(max_examples=200, deadline=None)
@given(system=st.none() | st.just("sys"), turns=st.lists(_turn, max_size=8))
def test_alternating_conversation_keeps_every_turn_in_order_and_alternates(system, turns):
    prompt = tuple(
        ([ChatMessage(role="system", content=system)] if system else [])
        + [ChatMessage(role=role, content=text) for role, text in turns]
    )
    conversation = alternating_conversation(prompt, question="Q", api="Test")
    roles = [turn.role for turn in conversation.turns]
    assert roles[0] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert conversation.system == system
    joined = "\n".join(turn.text for turn in conversation.turns)
    assert _in_order(joined, [text for _, text in turns])
    sources = [n for turn in conversation.turns for n in turn.sources]
    assert sources == list(range(2 if system else 1, len(prompt) + 1))
