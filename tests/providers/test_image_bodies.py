"""Images in each API's request body (pure body builders), and the fake's checks of them."""

from __future__ import annotations

from typing import Any

import pytest

from app.evaluation.context import cache_key
from app.formatting import FormatOptions, Message, format_prompt
from app.formatting.messages import ChatMessage
from app.providers.adapters.anthropic import messages_body
from app.providers.adapters.gemini import generate_content_body
from app.providers.adapters.openai import chat_completions_body
from app.providers.adapters.responses import responses_body
from testkit.wire_shapes import shape_problems
from tests.providers.conftest import request_for

PNG = "data:image/png;base64,iVBORw0KGgo="
URL = "https://images.example/cat.png"


def chat(*messages: dict[str, Any]) -> tuple[ChatMessage, ...]:
    parsed = [Message.model_validate(m) for m in messages]
    return format_prompt(parsed, {}, FormatOptions()).chat_prompt


def image(url: str, detail: str | None = None) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url} | ({"detail": detail} if detail else {})}


def test_consecutive_user_turns_merge_their_blocks_in_order_for_anthropic_and_gemini() -> None:
    prompt = chat(
        {"role": "user", "content": ["first", image(PNG)]},
        {"role": "tool", "content": "42"},
        {"role": "user", "content": [image(URL), "last"]},
    )
    request = request_for(prompt)
    anthropic, _ = messages_body(request, model="m", temperature=None, max_output_tokens=None)
    assert shape_problems("anthropic", anthropic) == []
    (turn,) = anthropic["messages"]
    assert [b.get("text") or b["source"]["type"] for b in turn["content"]] == [
        "first", "base64", "@[Tool]:\n42", "url", "last"
    ]  # fmt: skip
    gemini, _ = generate_content_body(request, temperature=None, max_output_tokens=None)
    assert shape_problems("gemini", gemini) == []
    parts = gemini["contents"][0]["parts"]
    assert [next(iter(p)) for p in parts] == ["text", "inlineData", "text", "fileData", "text"]


def test_a_detail_anthropic_and_gemini_cannot_take_is_named_in_the_rewrites() -> None:
    system = {"role": "system", "content": "Be brief."}
    request = request_for(chat(system, {"role": "user", "content": ["see", image(URL, "high")]}))
    _, anthropic = messages_body(request, model="m", temperature=None, max_output_tokens=None)
    _, gemini = generate_content_body(request, temperature=None, max_output_tokens=None)
    note = "image detail 'high' in turn 2 not sent: {} takes no detail setting"
    assert anthropic == [note.format("Anthropic")]
    assert gemini == [note.format("Gemini")]


def test_chat_and_responses_bodies_pass_the_parts_as_written() -> None:
    request = request_for(chat({"role": "user", "content": ["see", image(URL, "high")]}))
    body, rewrites = chat_completions_body(
        request, model="m", temperature=None, max_output_tokens=None
    )
    assert body["messages"][-1]["content"] == [
        {"type": "text", "text": "see"}, image(URL, "high")
    ]  # fmt: skip
    assert rewrites == []
    responses, _ = responses_body(request, model="m", temperature=None, max_output_tokens=None)
    assert responses["input"][-1]["content"] == [
        {"type": "input_text", "text": "see"},
        {"type": "input_image", "image_url": URL, "detail": "high"},
    ]
    assert shape_problems("openai", body) == shape_problems("responses", responses) == []


@pytest.mark.parametrize(
    ("wire", "body"),
    [
        ("openai", {"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": URL}]}]}),
        ("openai", {"messages": [{"role": "user", "content": [
            {"type": "input_image", "image_url": URL}]}]}),
        ("responses", {"model": "m", "input": [{"role": "user", "content": [
            {"type": "input_image", "image_url": URL}]}]}),
        ("anthropic", {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml",
                                         "data": "x"}}]}]}),
        ("anthropic", {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "url", "url": PNG}}]}]}),
        ("gemini", {"contents": [{"role": "user", "parts": [{"inlineData": {"data": "x"}}]}]}),
        ("gemini", {"contents": [{"role": "user", "parts": [{"fileData": {"url": URL}}]}]}),
    ],
)  # fmt: skip
def test_the_fake_refuses_image_forms_its_api_would_refuse(wire: str, body: dict[str, Any]) -> None:
    assert shape_problems(wire, body)


def test_two_requests_differing_only_in_an_image_are_cached_apart() -> None:
    first = request_for(chat({"role": "user", "content": ["see", image(URL)]}))
    second = request_for(chat({"role": "user", "content": ["see", image(PNG)]}))
    assert first.chat_prompt[0].content != second.chat_prompt[0].content
    same_text = second.model_copy(update={"chat_prompt": (
        second.chat_prompt[0].model_copy(update={"content": first.chat_prompt[0].content}),
    )})  # fmt: skip
    assert cache_key("t", first) != cache_key("t", same_text)
