"""OpenAI Chat Completions, on api.openai.com or any OpenAI-compatible server.

Works with vLLM, Ollama, LM Studio and llama.cpp's server through ``base_url``. Usage is read
from ``usage.prompt_tokens`` / ``usage.completion_tokens``; errors from ``error.message`` and
``error.code`` (``insufficient_quota`` means the account is out of credit: never retried).
Structured output takes any form of ``app.providers.structured_output.structured``:
``response_format`` ``json_schema`` (strict) or ``json_object`` (with ``schema`` for servers
that read it), a forced function tool, or the schema in the prompt only.
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel, Field

from app.providers.adapters.http import (
    DEFAULT_MAX_REPLY_BYTES,
    ConnectorFactory,
    HttpAdapter,
    UpstreamError,
    model_options,
    sampling_fields,
    with_extra_body,
)
from app.providers.base import ProviderRequest, ProviderResponse, ToolCall, Usage
from app.providers.finish_reasons import normalise_finish_reason
from app.providers.messages.tool_calls import (
    answer_text,
    api_call,
    arguments_text,
    call_id,
    numbered,
    openai_call_object,
    result_text,
)
from app.providers.messages.turns import openai_messages
from app.providers.structured_output.json_schema import openai_strict_schema, resolve_refs
from app.providers.structured_output.structured import with_schema_in_prompt
from app.settings.targets import OpenAITarget
from app.settings.tools import ToolChoice, ToolSpec

TOOL_DESCRIPTION = "Record the answer in the required structure."


class _Function(BaseModel):
    name: str = ""
    arguments: str | None = None


class _ToolCall(BaseModel):
    id: str | None = None
    function: _Function | None = None


class _Message(BaseModel):
    content: str | None = None
    refusal: str | None = None
    tool_calls: list[_ToolCall] | None = None
    function_call: _Function | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class _Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class ChatCompletion(BaseModel):
    """The parts of a Chat Completions reply the service reads."""

    model: str | None = None
    choices: list[_Choice] = Field(min_length=1)
    usage: _Usage | None = None


class _ErrorDetail(BaseModel):
    message: str = ""
    code: str | int | None = None
    type: str | None = None


class _ErrorBody(BaseModel):
    error: _ErrorDetail | str


# The sampling options this API takes besides temperature and the token limit, by body name.
CHAT_SAMPLING = {
    "top_p": "top_p",
    "seed": "seed",
    "stop": "stop",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
}


def chat_completions_body(
    request: ProviderRequest,
    *,
    model: str | None,
    temperature: float | None,
    max_output_tokens: int | None,
    max_tokens_key: str = "max_tokens",
    schema_in_json_mode: bool = True,
    reasoning_effort: str | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The Chat Completions body for ``request`` and the rewrites applied (pure).

    ``schema_in_json_mode`` adds the schema to ``response_format: json_object`` (read by
    llama.cpp and llama-cpp-python); OpenAI and Azure do not take it.
    """
    form = request.options.structured_output or "json_schema"
    request, schema_rewrites = with_schema_in_prompt(request, form)
    chat, rewrites = openai_messages(request.chat_prompt)
    messages: list[dict[str, Any]] = [*chat, *tool_loop_messages(request)]
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    body["messages"] = messages
    temperature, max_tokens = model_options(request, temperature, max_output_tokens)
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body[max_tokens_key] = max_tokens
    body.update(sampling_fields(request, **CHAT_SAMPLING))
    effort = request.options.reasoning_effort or reasoning_effort
    if effort is not None:
        body["reasoning_effort"] = effort
    if request.legacy_functions:
        body.update(legacy_function_fields(request))
    elif request.tools:
        body["tools"] = [{"type": "function", "function": function_object(t)}
                         for t in request.tools]  # fmt: skip
    if request.tool_choice is not None and not request.legacy_functions:
        body["tool_choice"] = chat_tool_choice(request.tool_choice)
    schema = request.options.json_schema
    if schema is not None:
        name = request.options.json_schema_name
        body.update(_structured_fields(schema, name, form, schema_in_json_mode=schema_in_json_mode))
    return with_extra_body(body, request), schema_rewrites + rewrites


def function_object(tool: ToolSpec) -> dict[str, Any]:
    """A tool as OpenAI's ``function`` object (``name``, ``description``, ``parameters``)."""
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    function["parameters"] = tool.parameters
    if tool.strict is not None:
        function["strict"] = tool.strict
    return function


def legacy_function_fields(request: ProviderRequest) -> dict[str, Any]:
    """OpenAI's legacy ``functions`` and ``function_call`` for the request's tools."""
    fields: dict[str, Any] = {"functions": [function_object(t) for t in request.tools]}
    choice = request.tool_choice
    if choice is not None:
        fields["function_call"] = {"name": choice.name} if choice.mode == "tool" else choice.mode
    return fields


def chat_tool_choice(choice: ToolChoice) -> Any:
    """``tool_choice`` as Chat Completions writes it."""
    if choice.mode == "tool":
        return {"type": "function", "function": {"name": choice.name}}
    return choice.mode


def tool_loop_messages(request: ProviderRequest) -> list[dict[str, Any]]:
    """Each earlier step: an assistant message with its calls, then one ``tool`` message each."""
    if request.legacy_functions:
        return legacy_loop_messages(request)
    messages: list[dict[str, Any]] = []
    for number, step in numbered(request.tool_steps):
        ids = [call_id(call, number, index) for index, call in enumerate(step.calls)]
        messages.append({
            "role": "assistant",
            "content": step.text or None,
            "tool_calls": [openai_call_object(c, i) for c, i in zip(step.calls, ids, strict=True)],
        })  # fmt: skip
        messages += [
            {"role": "tool", "tool_call_id": i, "content": result_text(c.output)}
            for c, i in zip(step.calls, ids, strict=True)
        ]
    return messages


def legacy_loop_messages(request: ProviderRequest) -> list[dict[str, Any]]:
    """Each earlier step in legacy form: ``function_call`` turns, then ``function`` results."""
    messages: list[dict[str, Any]] = []
    for step in request.tool_steps:
        for index, call in enumerate(step.calls):
            function = {"name": call.tool, "arguments": arguments_text(call)}
            said = (step.text or None) if index == 0 else None
            messages.append({"role": "assistant", "content": said, "function_call": function})
            messages.append({"role": "function", "name": call.tool,
                             "content": result_text(call.output)})  # fmt: skip
    return messages


def _structured_fields(
    schema: dict[str, Any], name: str, form: str, *, schema_in_json_mode: bool
) -> dict[str, Any]:
    """The body fields that ask for ``schema`` in ``form``."""
    if form == "json_schema":
        strict = openai_strict_schema(schema)
        json_schema = {"name": name, "schema": strict, "strict": True}
        return {"response_format": {"type": "json_schema", "json_schema": json_schema}}
    if form == "json_object":
        response_format: dict[str, Any] = {"type": "json_object"}
        if schema_in_json_mode:
            response_format["schema"] = resolve_refs(schema)
        return {"response_format": response_format}
    if form == "tool":
        parameters = resolve_refs(schema)
        function = {"name": name, "description": TOOL_DESCRIPTION, "parameters": parameters}
        return {
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": name}},
        }
    return {}


def parse_chat_completion(payload: Any, request: ProviderRequest) -> ProviderResponse:
    """Text, tool calls, usage, model and finish reason of a reply.

    A structured call answered by the forced tool has that call's arguments as its text; any
    other reply's calls are its ``tool_calls`` (and its answer when it has no text).
    """
    reply = ChatCompletion.model_validate(payload)
    choice = reply.choices[0]
    message = choice.message
    calls: list[ToolCall] = [
        api_call(c.function.name, call_id=c.id, arguments=c.function.arguments)
        for c in message.tool_calls or ()
        if c.function is not None
    ]
    if message.function_call is not None:  # a reply to legacy ``functions``
        function = message.function_call
        calls.append(api_call(function.name, call_id=None, arguments=function.arguments))
    text = message.content
    if request.options.json_schema is not None:
        if not text and calls and calls[0].arguments is not None:
            text = calls[0].arguments
        calls = []
    if text is None:
        text = message.refusal or ""
    usage = reply.usage or _Usage()
    return ProviderResponse(
        text=answer_text(text, calls),
        usage=Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens),
        model=reply.model,
        finish_reason=normalise_finish_reason(choice.finish_reason),
        tool_calls=tuple(calls),
    )


def parse_openai_error(payload: Any) -> UpstreamError | None:
    """The message and code of an OpenAI-style error body."""
    if not isinstance(payload, dict) or "error" not in payload:
        return None
    error = _ErrorBody.model_validate(payload).error
    if isinstance(error, str):
        return UpstreamError(message=error)
    code = error.code if error.code is not None else error.type
    return UpstreamError(message=error.message, code=None if code is None else str(code))


class OpenAIAdapter(HttpAdapter[OpenAITarget]):
    """``POST {base_url}/chat/completions`` with a bearer key (optional for local servers)."""

    def __init__(
        self,
        target: OpenAITarget,
        *,
        connector: ConnectorFactory | None,
        timeout_seconds: float,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        super().__init__(
            target,
            connector=connector,
            timeout_seconds=timeout_seconds,
            max_reply_bytes=max_reply_bytes,
        )
        self._official = httpx.URL(target.base_url).host == "api.openai.com"
        self.api = "OpenAI" if self._official else "the OpenAI-compatible server"
        # api.openai.com deprecated max_tokens (reasoning models refuse it); other servers
        # implementing the API mostly know only max_tokens.
        self._max_tokens_key = "max_completion_tokens" if self._official else "max_tokens"

    def build_body(self, request: ProviderRequest) -> tuple[dict[str, Any], list[str]]:
        """The Chat Completions body (see ``chat_completions_body``)."""
        return chat_completions_body(
            request,
            model=self.target.model,
            temperature=self.target.temperature,
            max_output_tokens=self.target.max_output_tokens,
            max_tokens_key=self._max_tokens_key,
            schema_in_json_mode=not self._official,
            reasoning_effort=self.target.reasoning_effort,
        )

    def url(self) -> str:
        """``{base_url}/chat/completions``."""
        return self.target.base_url.rstrip("/") + "/chat/completions"

    def headers(self) -> dict[str, str]:
        """Bearer authentication when a key is configured."""
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def parse_reply(self, payload: Any, request: ProviderRequest) -> ProviderResponse:
        """See ``parse_chat_completion``."""
        return parse_chat_completion(payload, request)

    def parse_error(self, payload: Any) -> UpstreamError | None:
        """See ``parse_openai_error``."""
        return parse_openai_error(payload)
