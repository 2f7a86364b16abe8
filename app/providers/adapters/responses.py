"""OpenAI Responses API (``POST {base_url}/responses``), for OpenAI and compatible servers.

A target picks it with ``api_format: responses`` (AgentV's key) or ``provider:
openai-responses`` (promptfoo's ``openai:responses:<model>``). The chatPrompt's system text
goes in ``instructions`` and its other turns are ``input`` messages (a ``tool`` turn as a user
turn with the ``@[Tool]:`` marker, as for Chat); a tool loop's earlier steps are
``function_call`` and ``function_call_output`` items, so no ``previous_response_id`` (nor
stored state) is needed. Tools are flat ``{type: function, name, parameters}``; reasoning
effort is ``reasoning.effort``; structured output is ``text.format`` (``json_schema`` strict
or ``json_object``) or a forced function tool. Usage is ``usage.input_tokens`` /
``output_tokens``; a reply ``incomplete`` for ``max_output_tokens`` was cut at the budget.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.providers.adapters.http import model_options, sampling_fields, with_extra_body
from app.providers.adapters.openai import TOOL_DESCRIPTION, OpenAIAdapter, function_object
from app.providers.base import ProviderRequest, ProviderResponse, ToolCall, Usage
from app.providers.finish_reasons import normalise_finish_reason
from app.providers.messages.hosted_output import hosted_line
from app.providers.messages.images import responses_content
from app.providers.messages.tool_calls import (
    answer_text,
    api_call,
    arguments_text,
    call_id,
    numbered,
    result_text,
)
from app.providers.messages.turns import openai_messages
from app.providers.structured_output.json_schema import openai_strict_schema, resolve_refs
from app.providers.structured_output.structured import with_schema_in_prompt
from app.settings.hosted_tools import HostedApi
from app.settings.tools import ToolChoice


class _Content(BaseModel):
    type: str
    text: str | None = None
    refusal: str | None = None


class _Item(BaseModel):
    type: str
    content: list[_Content] = Field(default_factory=list)
    name: str | None = None
    arguments: str | None = None
    call_id: str | None = None


class _Usage(BaseModel):
    input_tokens: int | None = None
    output_tokens: int | None = None


class _Incomplete(BaseModel):
    reason: str | None = None


class Response(BaseModel):
    """The parts of a Responses reply the service reads."""

    model: str | None = None
    status: str | None = None
    output: list[_Item]
    usage: _Usage | None = None
    incomplete_details: _Incomplete | None = None


def responses_tool_choice(choice: ToolChoice) -> Any:
    """``tool_choice`` as the Responses API writes it."""
    if choice.mode == "tool":
        return {"type": "function", "name": choice.name}
    return choice.mode


def _content(content: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A message's text, or its Chat content parts (a turn with images) as input content."""
    return content if isinstance(content, str) else responses_content(content)


def _input_items(request: ProviderRequest) -> tuple[str | None, list[dict[str, Any]], list[str]]:
    messages, rewrites = openai_messages(request.chat_prompt)
    system = [m["content"] for m in messages if m["role"] == "system"]
    items: list[dict[str, Any]] = [
        {"role": m["role"], "content": _content(m["content"])}
        for m in messages
        if m["role"] != "system"
    ]
    if not items:
        items.append({"role": "user", "content": request.question})
    for number, step in numbered(request.tool_steps):
        if step.text:
            items.append({"role": "assistant", "content": step.text})
        for index, call in enumerate(step.calls):
            ident = call_id(call, number, index)
            items.append({"type": "function_call", "call_id": ident, "name": call.tool,
                          "arguments": arguments_text(call)})  # fmt: skip
            items.append(
                {"type": "function_call_output", "call_id": ident,
                 "output": result_text(call.output)}
            )  # fmt: skip
    return ("\n\n".join(system) if system else None), items, rewrites


def responses_body(
    request: ProviderRequest,
    *,
    model: str,
    temperature: float | None,
    max_output_tokens: int | None,
    reasoning_effort: str | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The Responses body for ``request`` and the rewrites applied (pure)."""
    form = request.options.structured_output or "json_schema"
    request, schema_rewrites = with_schema_in_prompt(request, form)
    instructions, items, rewrites = _input_items(request)
    body: dict[str, Any] = {"model": model}
    if instructions is not None:
        body["instructions"] = instructions
    body["input"] = items
    body["store"] = False
    temperature, max_tokens = model_options(request, temperature, max_output_tokens)
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    body.update(sampling_fields(request, top_p="top_p"))
    effort = request.options.reasoning_effort or reasoning_effort
    if effort is not None:
        body["reasoning"] = {"effort": effort}
    # The Responses API requires `strict` (and makes tools strict when it is left out): the
    # declared value, else Chat's default (false).
    tools = [
        {"type": "function", **function_object(t), "strict": bool(t.strict)} for t in request.tools
    ]
    if request.tool_choice is not None:
        body["tool_choice"] = responses_tool_choice(request.tool_choice)
    _structured(request, form, body, tools)
    tools += [t.spec for t in request.hosted_tools]
    if tools:
        body["tools"] = tools
    given = (request.options.extra_body or {}).get("instructions")
    if isinstance(given, str) and instructions is not None:
        # A provider's own instructions come first, then the prompt's system text (promptfoo
        # sends the latter as an input item after them).
        body["instructions"] = f"{given}\n\n{instructions}"
    return with_extra_body(body, request), schema_rewrites + rewrites


def _structured(
    request: ProviderRequest, form: str, body: dict[str, Any], tools: list[dict[str, Any]]
) -> None:
    """Ask for the request's schema in ``form``: ``text.format``, or a forced tool."""
    schema = request.options.json_schema
    if schema is None:
        return
    name = request.options.json_schema_name
    if form == "json_schema":
        strict = openai_strict_schema(schema)
        fmt = {"type": "json_schema", "name": name, "schema": strict, "strict": True}
        body["text"] = {"format": fmt}
    elif form == "json_object":
        body["text"] = {"format": {"type": "json_object"}}
    elif form == "tool":
        tools.append({"type": "function", "name": name, "description": TOOL_DESCRIPTION,
                      "parameters": resolve_refs(schema), "strict": False})  # fmt: skip
        body["tool_choice"] = {"type": "function", "name": name}


def parse_response(payload: Any, request: ProviderRequest) -> ProviderResponse:
    """Output text, function calls, usage and how the reply ended."""
    reply = Response.model_validate(payload)
    texts: list[str] = []
    lines: list[str] = []  # with hosted tools: each message and tool item a line, as promptfoo
    hosted = False
    calls: list[ToolCall] = []
    for raw, item in zip(payload["output"], reply.output, strict=True):
        if item.type == "message":
            said = [part.text or part.refusal or "" for part in item.content]
            texts += said
            lines += ["".join(said)] if any(said) else []
        elif item.type == "function_call":
            calls.append(api_call(item.name or "", call_id=item.call_id, arguments=item.arguments))
        elif (line := hosted_line(raw)) is not None:
            lines.append(line)
            hosted = True
    text = "\n".join(lines) if hosted else "".join(texts)
    if request.options.json_schema is not None:
        if not text and calls and calls[0].arguments is not None:
            text = calls[0].arguments
        calls = []
    finish = reply.status
    if reply.status == "incomplete" and reply.incomplete_details is not None:
        reason = reply.incomplete_details.reason
        finish = "length" if reason == "max_output_tokens" else reason
    elif calls:
        finish = "tool_calls"
    usage = reply.usage or _Usage()
    return ProviderResponse(
        text=answer_text(text, calls),
        usage=Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
        model=reply.model,
        finish_reason=normalise_finish_reason(finish, called_tools=bool(calls)),
        tool_calls=tuple(calls),
    )


class ResponsesAdapter(OpenAIAdapter):
    """``POST {base_url}/responses``; authentication and errors as Chat Completions'."""

    hosted_tools_api: HostedApi | None = "responses"

    def build_body(self, request: ProviderRequest) -> tuple[dict[str, Any], list[str]]:
        """See ``responses_body``."""
        return responses_body(
            request,
            model=self.target.model,
            temperature=self.target.temperature,
            max_output_tokens=self.target.max_output_tokens,
            reasoning_effort=self.target.reasoning_effort,
        )

    def url(self) -> str:
        """``{base_url}/responses``."""
        return self.target.base_url.rstrip("/") + "/responses"

    def parse_reply(self, payload: Any, request: ProviderRequest) -> ProviderResponse:
        """See ``parse_response``."""
        return parse_response(payload, request)
