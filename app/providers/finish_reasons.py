"""Finish reasons in one vocabulary: why a model stopped, as promptfoo normalises them.

Each API says it in its own words (OpenAI ``stop``/``length``/``tool_calls``, Anthropic
``end_turn``/``max_tokens``/``tool_use``, Gemini ``STOP``/``MAX_TOKENS``/``SAFETY``, the
Responses API a ``status``). Targets record the reason in OpenAI's words, the ones promptfoo's
``finish-reason`` assert compares with (measured against promptfoo 0.123.1): ``stop``
(a natural end, a stop sequence), ``length`` (the output-token limit, or the context window),
``tool_calls`` (the reply calls tools), ``content_filter`` (a refusal or a safety block);
any other reason is kept, trimmed and in lower case (Anthropic's ``pause_turn``).

promptfoo's Gemini and Responses providers report no finish reason at all (its
``finish-reason`` then fails); here they report theirs in the same words (docs/design.md,
deliberate differences).
"""

from __future__ import annotations

NORMALISED: dict[str, str] = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    "pause_turn": "pause_turn",
    # Gemini's finishReason
    "safety": "content_filter",
    "recitation": "content_filter",
    "prohibited_content": "content_filter",
    "blocklist": "content_filter",
    "spii": "content_filter",
    "image_safety": "content_filter",
    # the Responses API's status, and its incomplete_details.reason
    "completed": "stop",
    "max_output_tokens": "length",
}
"""Each API's word (lower case) -> the normalised one."""


def normalise_finish_reason(raw: object, *, called_tools: bool = False) -> str | None:
    """``raw`` in the normalised vocabulary; None when there is none.

    ``called_tools``: the reply made tool calls, which APIs that say ``STOP`` (Gemini) or
    ``completed`` (Responses) for such a reply do not say themselves.
    """
    if not isinstance(raw, str) or not raw.strip():
        return None
    reason = NORMALISED.get(raw.strip().lower(), raw.strip().lower())
    return "tool_calls" if called_tools and reason == "stop" else reason
