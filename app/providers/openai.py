"""OpenAI Chat Completions, on api.openai.com or any OpenAI-compatible server.

Works with vLLM, Ollama, LM Studio and llama.cpp's server through ``base_url``. Usage is read
from ``usage.prompt_tokens`` / ``usage.completion_tokens``; errors from ``error.message`` and
``error.code`` (``insufficient_quota`` means the account is out of credit: never retried).
Structured output takes any form of ``app.providers.structured``: ``response_format``
``json_schema`` (strict) or ``json_object`` (with ``schema`` for servers that read it), a
forced function tool, or the schema in the prompt only.
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel, Field

from app.providers.base import ProviderRequest, ProviderResponse, Usage
from app.providers.http import (
    DEFAULT_MAX_REPLY_BYTES,
    ConnectorFactory,
    HttpAdapter,
    UpstreamError,
    model_options,
    sampling_fields,
)
from app.providers.json_schema import openai_strict_schema, resolve_refs
from app.providers.structured import with_schema_in_prompt
from app.providers.turns import openai_messages
from app.settings.targets import OpenAITarget

TOOL_DESCRIPTION = "Record the answer in the required structure."


class _Function(BaseModel):
    arguments: str | None = None


class _ToolCall(BaseModel):
    function: _Function | None = None


class _Message(BaseModel):
    content: str | None = None
    refusal: str | None = None
    tool_calls: list[_ToolCall] | None = None


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


def chat_completions_body(
    request: ProviderRequest,
    *,
    model: str | None,
    temperature: float | None,
    max_output_tokens: int | None,
    max_tokens_key: str = "max_tokens",
    schema_in_json_mode: bool = True,
) -> tuple[dict[str, Any], list[str]]:
    """The Chat Completions body for ``request`` and the rewrites applied (pure).

    ``schema_in_json_mode`` adds the schema to ``response_format: json_object`` (read by
    llama.cpp and llama-cpp-python); OpenAI and Azure do not take it.
    """
    form = request.options.structured_output or "json_schema"
    request, schema_rewrites = with_schema_in_prompt(request, form)
    messages, rewrites = openai_messages(request.chat_prompt)
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    body["messages"] = messages
    temperature, max_tokens = model_options(request, temperature, max_output_tokens)
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body[max_tokens_key] = max_tokens
    body.update(sampling_fields(request, top_p="top_p", seed="seed"))
    schema = request.options.json_schema
    if schema is not None:
        name = request.options.json_schema_name
        body.update(_structured_fields(schema, name, form, schema_in_json_mode=schema_in_json_mode))
    return body, schema_rewrites + rewrites


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


def parse_chat_completion(payload: Any) -> ProviderResponse:
    """Text (or a forced tool call's arguments), usage, model and finish reason of a reply."""
    reply = ChatCompletion.model_validate(payload)
    choice = reply.choices[0]
    message = choice.message
    text = message.content
    calls = [c.function.arguments for c in message.tool_calls or () if c.function is not None]
    if not text and calls and calls[0] is not None:
        text = calls[0]
    if text is None:
        text = message.refusal or ""
    usage = reply.usage or _Usage()
    return ProviderResponse(
        text=text,
        usage=Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens),
        model=reply.model,
        finish_reason=choice.finish_reason,
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
        )

    def url(self) -> str:
        """``{base_url}/chat/completions``."""
        return self.target.base_url.rstrip("/") + "/chat/completions"

    def headers(self) -> dict[str, str]:
        """Bearer authentication when a key is configured."""
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def parse_reply(self, payload: Any, request: ProviderRequest) -> ProviderResponse:  # noqa: ARG002
        """See ``parse_chat_completion``."""
        return parse_chat_completion(payload)

    def parse_error(self, payload: Any) -> UpstreamError | None:
        """See ``parse_openai_error``."""
        return parse_openai_error(payload)
