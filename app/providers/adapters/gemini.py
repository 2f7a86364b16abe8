"""Google Gemini ``generateContent`` (``POST /v1beta/models/{model}:generateContent``).

System text goes in ``systemInstruction``; ``contents`` alternate roles ``user`` and
``model``, starting with the user. Structured output sets
``generationConfig.responseMimeType = application/json`` and ``responseSchema`` (an OpenAPI
3.0 subset). Usage is ``usageMetadata.promptTokenCount`` / ``candidatesTokenCount``. Errors are
``{"error": {"code", "message", "status", "details"}}``; a ``RetryInfo`` detail's
``retryDelay`` is honoured like ``Retry-After``. The key travels in ``x-goog-api-key``, never
in the URL.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, Field

from app.providers.adapters.http import (
    HttpAdapter,
    UpstreamError,
    model_options,
    sampling_fields,
    with_extra_body,
)
from app.providers.base import ProviderRequest, ProviderResponse, Usage
from app.providers.finish_reasons import normalise_finish_reason
from app.providers.messages.images import dropped_details, gemini_parts
from app.providers.messages.tool_calls import api_call, call_id, numbered
from app.providers.messages.turns import alternating_conversation
from app.providers.structured_output.json_schema import gemini_schema
from app.providers.structured_output.structured import with_schema_in_prompt
from app.settings.hosted_tools import HostedApi
from app.settings.targets import GeminiTarget
from app.settings.tools import ToolChoice


class _FunctionCall(BaseModel):
    name: str = ""
    args: Any = None
    id: str | None = None


class _Part(BaseModel):
    text: str | None = None
    thought: bool | None = None
    functionCall: _FunctionCall | None = None


class _Content(BaseModel):
    parts: list[_Part] = Field(default_factory=list)


class _Candidate(BaseModel):
    content: _Content | None = None
    finishReason: str | None = None


class _UsageMetadata(BaseModel):
    promptTokenCount: int | None = None
    candidatesTokenCount: int | None = None


class GenerateContentResponse(BaseModel):
    """The parts of a ``generateContent`` reply the service reads."""

    candidates: list[_Candidate] = Field(min_length=1)
    usageMetadata: _UsageMetadata | None = None
    modelVersion: str | None = None


class _ErrorDetail(BaseModel):
    code: int | None = None
    message: str = ""
    status: str | None = None
    details: list[dict[str, Any]] = Field(default_factory=list)


class _ErrorBody(BaseModel):
    error: _ErrorDetail


# The sampling options this API takes besides temperature and the token limit, by body name.
GEMINI_SAMPLING = {
    "top_p": "topP",
    "seed": "seed",
    "top_k": "topK",
    "stop": "stopSequences",
    "frequency_penalty": "frequencyPenalty",
    "presence_penalty": "presencePenalty",
}


def generate_content_body(
    request: ProviderRequest, *, temperature: float | None, max_output_tokens: int | None
) -> tuple[dict[str, Any], list[str]]:
    """The ``generateContent`` body for ``request`` and the rewrites applied (pure).

    Structured output: ``responseMimeType`` + ``responseSchema`` (form ``json_schema``),
    ``responseMimeType`` alone with the schema in the system text (``json_object``), or the
    schema in the system text only (``none``).
    """
    form = request.options.structured_output or "json_schema"
    request, schema_rewrites = with_schema_in_prompt(request, form)
    conversation = alternating_conversation(
        request.chat_prompt, question=request.question, api="Gemini"
    )
    body: dict[str, Any] = {}
    if conversation.system is not None:
        body["systemInstruction"] = {"parts": [{"text": conversation.system}]}
    body["contents"] = [
        {"role": "model" if t.role == "assistant" else "user",
         "parts": gemini_parts(t.parts) if t.parts else [{"text": t.text}]}
        for t in conversation.turns
    ]  # fmt: skip
    body["contents"] += tool_loop_contents(request)
    if request.tools:
        declarations = [
            {"name": t.name, **({"description": t.description} if t.description else {}),
             "parameters": gemini_schema(t.parameters)}
            for t in request.tools
        ]  # fmt: skip
        body["tools"] = [{"functionDeclarations": declarations}]
    if request.hosted_tools:
        body["tools"] = body.get("tools", []) + [t.spec for t in request.hosted_tools]
    if request.tool_choice is not None:
        body["toolConfig"] = {"functionCallingConfig": gemini_tool_choice(request.tool_choice)}
    temperature, max_tokens = model_options(request, temperature, max_output_tokens)
    config: dict[str, Any] = {}
    if temperature is not None:
        config["temperature"] = temperature
    if max_tokens is not None:
        config["maxOutputTokens"] = max_tokens
    config.update(sampling_fields(request, **GEMINI_SAMPLING))
    schema = request.options.json_schema
    if schema is not None and form in ("json_schema", "json_object"):
        config["responseMimeType"] = "application/json"
        if form == "json_schema":
            config["responseSchema"] = gemini_schema(schema)
    if config:
        body["generationConfig"] = config
    images = dropped_details(request.chat_prompt, "Gemini")
    return with_extra_body(body, request), schema_rewrites + conversation.rewrites + images


def gemini_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    """``functionCallingConfig``: ``AUTO``, ``ANY`` (one tool: allowed names), ``NONE``."""
    if choice.mode == "tool":
        return {"mode": "ANY", "allowedFunctionNames": [choice.name]}
    return {"mode": {"auto": "AUTO", "none": "NONE"}.get(choice.mode, "ANY")}


def tool_loop_contents(request: ProviderRequest) -> list[dict[str, Any]]:
    """Each earlier step: a model turn of ``functionCall`` parts, a user turn of responses."""
    contents: list[dict[str, Any]] = []
    for number, step in numbered(request.tool_steps):
        parts: list[dict[str, Any]] = [{"text": step.text}] if step.text else []
        responses: list[dict[str, Any]] = []
        for index, call in enumerate(step.calls):
            args = call.input if isinstance(call.input, dict) else {}
            ident = call_id(call, number, index)
            parts.append({"functionCall": {"id": ident, "name": call.tool, "args": args}})
            output = call.output if isinstance(call.output, dict) else {"result": call.output}
            responses.append(
                {"functionResponse": {"id": ident, "name": call.tool, "response": output}}
            )
        contents += [{"role": "model", "parts": parts}, {"role": "user", "parts": responses}]
    return contents


def _retry_delay(details: list[dict[str, Any]]) -> float | None:
    for detail in details:
        delay = detail.get("retryDelay")
        if str(detail.get("@type", "")).endswith("RetryInfo") and isinstance(delay, str):
            try:
                return float(delay.removesuffix("s"))
            except ValueError:
                return None
    return None


def _daily_quota_spent(details: list[dict[str, Any]]) -> bool:
    """A ``QuotaFailure`` on a per-day quota will not pass by retrying within the call."""
    for detail in details:
        for violation in detail.get("violations", []) or []:
            if isinstance(violation, dict) and "PerDay" in str(violation.get("quotaId", "")):
                return True
    return False


def gemini_parts_text(payload: Any) -> str:
    """A reply made only of calls as promptfoo's Gemini provider outputs it: its parts as JSON.

    ``[{functionCall: {name, args}}]`` (thoughts left out), so a transform or a script reads
    ``output[0].functionCall.name`` as on promptfoo.
    """
    parts = payload["candidates"][0]["content"]["parts"]
    kept = [part for part in parts if isinstance(part, dict) and not part.get("thought")]
    return json.dumps(kept, ensure_ascii=False)


class GeminiAdapter(HttpAdapter[GeminiTarget]):
    """One Gemini model."""

    hosted_tools_api: HostedApi | None = "gemini"

    api = "Gemini"

    def build_body(self, request: ProviderRequest) -> tuple[dict[str, Any], list[str]]:
        """See ``generate_content_body``."""
        return generate_content_body(
            request,
            temperature=self.target.temperature,
            max_output_tokens=self.target.max_output_tokens,
        )

    def url(self) -> str:
        """``{base_url}/v1beta/models/{model}:generateContent``."""
        model = quote(self.target.model.removeprefix("models/"), safe="")
        return f"{self.target.base_url.rstrip('/')}/v1beta/models/{model}:generateContent"

    def headers(self) -> dict[str, str]:
        """The ``x-goog-api-key`` header."""
        return {"x-goog-api-key": self._key}

    def parse_reply(self, payload: Any, request: ProviderRequest) -> ProviderResponse:  # noqa: ARG002
        """The first candidate's text parts (thoughts left out), calls, usage and finish."""
        reply = GenerateContentResponse.model_validate(payload)
        candidate = reply.candidates[0]
        parts = candidate.content.parts if candidate.content else []
        text = "".join(part.text or "" for part in parts if not part.thought)
        calls = [
            api_call(part.functionCall.name, call_id=part.functionCall.id,
                     parsed=part.functionCall.args, from_object=True)
            for part in parts
            if part.functionCall is not None
        ]  # fmt: skip
        usage = reply.usageMetadata or _UsageMetadata()
        return ProviderResponse(
            text=text if text.strip() or not calls else gemini_parts_text(payload),
            tool_calls=tuple(calls),
            usage=Usage(
                input_tokens=usage.promptTokenCount, output_tokens=usage.candidatesTokenCount
            ),
            model=reply.modelVersion or self.target.model,
            finish_reason=normalise_finish_reason(candidate.finishReason, called_tools=bool(calls)),
        )

    def parse_error(self, payload: Any) -> UpstreamError | None:
        """``error.message``, ``error.status`` and a ``RetryInfo`` delay if any."""
        if not isinstance(payload, dict) or not isinstance(payload.get("error"), dict):
            return None
        error = _ErrorBody.model_validate(payload).error
        return UpstreamError(
            message=error.message,
            code=error.status,
            retry_after=_retry_delay(error.details),
            quota_exhausted=_daily_quota_spent(error.details),
        )
