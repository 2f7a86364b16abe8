"""Anthropic Messages API (``POST /v1/messages``).

System text goes in the top-level ``system`` field; ``messages`` strictly alternate user and
assistant, starting with the user; ``max_tokens`` is required. Structured output is forced
tool use: one tool whose ``input_schema`` is the schema and a ``tool_choice`` naming it; the
reply's text is then the JSON of the tool's input. Usage is ``usage.input_tokens`` /
``usage.output_tokens``; errors are ``{"type": "error", "error": {"type", "message"}}``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

from app.providers.adapters.http import (
    HttpAdapter,
    UpstreamError,
    model_options,
    sampling_fields,
    with_extra_body,
)
from app.providers.base import ProviderRequest, ProviderResponse, Usage
from app.providers.finish_reasons import normalise_finish_reason
from app.providers.messages.images import anthropic_blocks, dropped_details
from app.providers.messages.tool_calls import answer_text, api_call, call_id, numbered, result_text
from app.providers.messages.turns import alternating_conversation
from app.providers.structured_output.json_schema import resolve_refs
from app.providers.structured_output.structured import with_schema_in_prompt
from app.settings.hosted_tools import HostedApi
from app.settings.targets import AnthropicTarget
from app.settings.tools import ToolChoice

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096


class _Block(BaseModel):
    type: str
    id: str | None = None
    text: str | None = None
    name: str | None = None
    input: Any = None


class _Usage(BaseModel):
    input_tokens: int | None = None
    output_tokens: int | None = None


class Message(BaseModel):
    """The parts of a Messages reply the service reads."""

    type: Literal["message"] = "message"
    model: str | None = None
    content: list[_Block]
    stop_reason: str | None = None
    usage: _Usage | None = None


class _ErrorDetail(BaseModel):
    type: str | None = None
    message: str = ""


class _ErrorBody(BaseModel):
    error: _ErrorDetail


def messages_body(
    request: ProviderRequest,
    *,
    model: str,
    temperature: float | None,
    max_output_tokens: int | None,
) -> tuple[dict[str, Any], list[str]]:
    """The Messages body for ``request`` and the rewrites applied (pure).

    Structured output is a forced tool (form ``tool``) or the schema in the system text
    (form ``none``).
    """
    form = request.options.structured_output or "tool"
    request, schema_rewrites = with_schema_in_prompt(request, form)
    conversation = alternating_conversation(
        request.chat_prompt, question=request.question, api="Anthropic"
    )
    temperature, max_tokens = model_options(request, temperature, max_output_tokens)
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens or DEFAULT_MAX_TOKENS}
    if conversation.system is not None:
        body["system"] = conversation.system
    body["messages"] = [
        {"role": t.role, "content": anthropic_blocks(t.parts) if t.parts else t.text}
        for t in conversation.turns
    ]
    body["messages"] += tool_loop_messages(request)
    if temperature is not None:
        body["temperature"] = temperature
    body.update(sampling_fields(request, top_p="top_p", top_k="top_k", stop="stop_sequences"))
    if request.tools or request.hosted_tools:
        body["tools"] = [
            {"name": t.name, **({"description": t.description} if t.description else {}),
             "input_schema": t.parameters}
            for t in request.tools
        ] + [t.spec for t in request.hosted_tools]  # fmt: skip
    if request.tool_choice is not None:
        body["tool_choice"] = anthropic_tool_choice(request.tool_choice)
    schema = request.options.json_schema
    if schema is not None and form == "tool":
        name = request.options.json_schema_name
        body["tools"] = [
            {
                "name": name,
                "description": "Record the answer in the required structure.",
                "input_schema": resolve_refs(schema),
            }
        ]
        body["tool_choice"] = {"type": "tool", "name": name}
    images = dropped_details(request.chat_prompt, "Anthropic")
    return with_extra_body(body, request), schema_rewrites + conversation.rewrites + images


def anthropic_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    """``tool_choice`` as Anthropic writes it (``required`` is ``any``)."""
    if choice.mode == "tool":
        return {"type": "tool", "name": choice.name}
    return {"type": "any" if choice.mode == "required" else choice.mode}


def tool_loop_messages(request: ProviderRequest) -> list[dict[str, Any]]:
    """Each earlier step: an assistant turn of ``tool_use`` blocks, a user turn of results."""
    messages: list[dict[str, Any]] = []
    for number, step in numbered(request.tool_steps):
        ids = [call_id(call, number, index) for index, call in enumerate(step.calls)]
        blocks: list[dict[str, Any]] = [{"type": "text", "text": step.text}] if step.text else []
        blocks += [
            {"type": "tool_use", "id": i, "name": c.tool,
             "input": c.input if isinstance(c.input, dict) else {}}
            for c, i in zip(step.calls, ids, strict=True)
        ]  # fmt: skip
        results = [
            {"type": "tool_result", "tool_use_id": i, "content": result_text(c.output)}
            for c, i in zip(step.calls, ids, strict=True)
        ]
        messages += [{"role": "assistant", "content": blocks}, {"role": "user", "content": results}]
    return messages


class AnthropicAdapter(HttpAdapter[AnthropicTarget]):
    """``POST {base_url}/v1/messages`` with ``x-api-key`` and ``anthropic-version``."""

    hosted_tools_api: HostedApi | None = "anthropic"

    api = "Anthropic"

    def build_body(self, request: ProviderRequest) -> tuple[dict[str, Any], list[str]]:
        """See ``messages_body``."""
        return messages_body(
            request,
            model=self.target.model,
            temperature=self.target.temperature,
            max_output_tokens=self.target.max_output_tokens,
        )

    def url(self) -> str:
        """``{base_url}/v1/messages``."""
        return self.target.base_url.rstrip("/") + "/v1/messages"

    def headers(self) -> dict[str, str]:
        """The key and the API version."""
        return {"x-api-key": self._key, "anthropic-version": ANTHROPIC_VERSION}

    def parse_reply(self, payload: Any, request: ProviderRequest) -> ProviderResponse:
        """Text blocks joined, ``tool_use`` blocks as calls (structured: the tool's input)."""
        reply = Message.model_validate(payload)
        text = "".join(block.text or "" for block in reply.content if block.type == "text")
        calls = [
            api_call(block.name or "", call_id=block.id, parsed=block.input, from_object=True)
            for block in reply.content
            if block.type == "tool_use"
        ]
        if request.options.json_schema is not None:
            if calls:
                text = json.dumps(calls[0].input, ensure_ascii=False)
            calls = []
        usage = reply.usage or _Usage()
        return ProviderResponse(
            text=answer_text(text, calls),
            usage=Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
            model=reply.model,
            finish_reason=normalise_finish_reason(reply.stop_reason),
            tool_calls=tuple(calls),
        )

    def parse_error(self, payload: Any) -> UpstreamError | None:
        """``error.message`` and ``error.type`` (and ``error.details.error_code``)."""
        if not isinstance(payload, dict) or not isinstance(payload.get("error"), dict):
            return None
        error = _ErrorBody.model_validate(payload).error
        details = payload["error"].get("details")
        code = details.get("error_code") if isinstance(details, dict) else None
        return UpstreamError(message=error.message, code=code or error.type)
