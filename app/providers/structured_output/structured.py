"""Structured output per target: the form a call uses, and ``auto``'s one fallback.

A target's ``structured_output`` setting is a form or ``auto``:

- ``json_schema``: the API's schema-constrained output (OpenAI and Azure ``response_format``
  ``json_schema`` in strict mode; Gemini ``responseMimeType`` + ``responseSchema``).
- ``json_object``: JSON mode, the schema written into the system message (OpenAI-compatible
  ``response_format: {type: json_object}`` plus ``schema``, which llama.cpp and
  llama-cpp-python use to constrain generation; Gemini ``responseMimeType`` only).
- ``tool``: a forced tool call whose parameters are the schema (OpenAI and Azure function
  tools; Anthropic tool use). The reply is the tool call's arguments.
- ``none``: the schema in the system message only; the reply is parsed leniently.
- ``auto``: the wire's strongest form first. When the server refuses it (400, 422 or 500 with a
  message naming the structured-output parameter), the call is made again once with the next
  form, and every later call of the target uses that form (for the life of the process).

While ``auto`` has not seen the first form answered, one call probes and the target's other
structured calls wait for its first answer, so a refusing server costs one extra request per
target, not one per call in flight.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import BaseModel, Field

from app.formatting.messages import ChatMessage
from app.providers.base import ProviderRequest
from app.providers.errors import ProviderError
from app.settings.targets import StructuredForm, StructuredOutput

AUTO_FIRST: dict[str, StructuredForm] = {
    "openai": "json_schema",
    "azure": "json_schema",
    "anthropic": "tool",
    "gemini": "json_schema",
}
"""The form ``auto`` starts with, per provider."""

REFUSAL_STATUSES = frozenset({400, 422, 500})
"""Statuses with which servers refuse a parameter (llama-cpp-python answers 500)."""

# Words of a refusal that names the form's parameter, lower case, underscores removed
# (``response_format`` and ``responseFormat`` read alike).
_NAMED: dict[StructuredForm, tuple[str, ...]] = {
    "json_schema": (
        "responseformat",
        "jsonschema",
        "jsonobject",
        "responseschema",
        "responsemimetype",
    ),
    "json_object": ("responseformat", "jsonobject", "responsemimetype"),
    "tool": ("toolchoice", "tools", "function", "inputschema"),
    "none": (),
}
SCHEMA_INSTRUCTION = "Reply with one JSON object, and nothing else, valid for this JSON Schema:"


class StructuredOutputState(BaseModel):
    """How a target is asked for structured output, as ``GET /targets`` shows it."""

    setting: StructuredOutput = Field(examples=["auto"])
    form: StructuredForm = Field(description="The form calls use now.", examples=["json_object"])
    fallback_reason: str | None = Field(
        None,
        description="Why `auto` left its first form: the server's refusal.",
        examples=["json_schema refused (HTTP 500): Input should be 'text' or 'json_object'"],
    )


def _normalised(text: str) -> str:
    return text.lower().replace("_", "").replace("-", "")


def names_form(form: StructuredForm, message: str) -> bool:
    """Whether an error message names the parameter that carries ``form``."""
    text = _normalised(message)
    return any(word in text for word in _NAMED[form])


def is_refusal(form: StructuredForm, error: ProviderError) -> bool:
    """Whether ``error`` is the server refusing ``form`` (not some other failure)."""
    return (
        form != "none"
        and error.upstream_status in REFUSAL_STATUSES
        and names_form(form, error.upstream_message or "")
    )


def next_form(provider: str, form: StructuredForm, message: str) -> StructuredForm | None:
    """The form to try after ``form`` was refused with ``message`` (None: nothing left).

    A refusal of ``json_schema`` that still speaks of JSON types (``json_schema`` or
    ``json_object``, as llama-cpp-python's "Input should be 'text' or 'json_object'") means
    the server knows JSON mode: ``json_object``. A refusal of the whole parameter means
    ``none``. Gemini's ``responseSchema`` falls back to ``responseMimeType`` alone unless the
    refusal names that too.
    """
    if form == "none":
        return None
    if form != "json_schema":
        return "none"
    text = _normalised(message)
    if provider == "gemini":
        return "none" if "responsemimetype" in text else "json_object"
    return "json_object" if "jsonschema" in text or "jsonobject" in text else "none"


def schema_instruction(schema: dict[str, Any]) -> str:
    """The system-message paragraph that carries the schema for prompt-only forms."""
    return f"{SCHEMA_INSTRUCTION}\n{json.dumps(schema, indent=2, ensure_ascii=False)}"


def with_schema_in_prompt(
    request: ProviderRequest, form: StructuredForm
) -> tuple[ProviderRequest, list[str]]:
    """The request with the schema in its system message when ``form`` needs it (pure).

    ``json_object`` and ``none`` do not constrain the reply to the schema, so the model is
    shown it. Returns the request and the rewrite made (shown by the provider preview).
    """
    schema = request.options.json_schema
    if schema is None or form not in ("json_object", "none"):
        return request, []
    instruction = schema_instruction(schema)
    chat = list(request.chat_prompt)
    if chat and chat[0].role == "system":
        chat[0] = ChatMessage(role="system", content=f"{chat[0].content}\n\n{instruction}")
    else:
        chat.insert(0, ChatMessage(role="system", content=instruction))
    rewrite = f"JSON schema written into the system message (structured output {form})"
    return request.model_copy(update={"chat_prompt": tuple(chat)}), [rewrite]


class Negotiation:
    """One target's structured-output form: fixed, or ``auto`` with at most one fallback."""

    def __init__(self, setting: StructuredOutput, provider: str) -> None:
        self.setting = setting
        self.provider = provider
        self.form: StructuredForm = AUTO_FIRST[provider] if setting == "auto" else setting
        self.fallback_reason: str | None = None
        self._answered = asyncio.Event()
        self._probing = False

    async def form_for_call(self) -> StructuredForm:
        """The form to use; while ``auto`` awaits its first answer, wait for the probe."""
        if self.setting == "auto" and not self._answered.is_set():
            if self._probing:
                await self._answered.wait()
            else:
                self._probing = True
        return self.form

    def answered(self) -> None:
        """A structured call got an answer (or gave up): waiting calls may go."""
        self._answered.set()

    def refused(self, form: StructuredForm, error: ProviderError) -> StructuredForm | None:
        """Record that ``form`` was refused; the form to try the call again with, if any.

        Only ``auto`` falls back, and only once: if another call already moved on from
        ``form``, its choice is reused; after the one fallback, a refusal is final.
        """
        if self.setting != "auto" or not is_refusal(form, error):
            return None
        if self.form != form:
            return self.form
        if self.fallback_reason is not None:
            return None
        following = next_form(self.provider, form, error.upstream_message or "")
        if following is None:
            return None
        said = (error.upstream_message or "").strip()[:300]
        self.fallback_reason = f"{form} refused (HTTP {error.upstream_status}): {said}"
        self.form = following
        return following

    def state(self) -> StructuredOutputState:
        """What ``GET /targets`` shows."""
        return StructuredOutputState(
            setting=self.setting, form=self.form, fallback_reason=self.fallback_reason
        )
