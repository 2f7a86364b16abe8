"""Tool calls of API replies in one shape, and what every adapter sends back in a tool loop.

Each adapter reads its wire's calls (OpenAI ``tool_calls``, Responses ``function_call`` items,
Anthropic ``tool_use`` blocks, Gemini ``functionCall`` parts) into ``ToolCall``s through
``api_call``: the name, the arguments parsed and as text, the id and the step. Arguments that do
not parse as a JSON object are kept as text and marked (``arguments_error``), never dropped.

A reply that calls tools and says nothing has, as its answer, the calls in OpenAI's Chat form
(``[{id, type: function, function: {name, arguments}}]``): what promptfoo's OpenAI provider
answers, so ``is-json``, ``is-valid-openai-tools-call`` and ``output[0].function.name`` read it,
whatever the provider.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from app.providers.base import ToolCall, ToolStep


def parse_arguments(raw: str | None) -> tuple[Any, str | None]:
    """The arguments text parsed as a JSON object, or ``None`` and why it is not one.

    An empty text is no arguments (``{}``): servers write it for functions without parameters.
    """
    if raw is None or not raw.strip():
        return {}, None
    try:
        parsed = json.loads(raw)
    except ValueError as exc:
        return None, f"arguments are not JSON: {exc}"
    if not isinstance(parsed, dict):
        return None, f"arguments are JSON {type(parsed).__name__}, not an object"
    return parsed, None


def api_call(
    name: str,
    *,
    call_id: str | None,
    arguments: str | None = None,
    parsed: Any = None,
    from_object: bool = False,
) -> ToolCall:
    """One call read from a reply: from its arguments text, or (``from_object``) a JSON object.

    Anthropic and Gemini send arguments as a JSON object: its text is its JSON dump.
    """
    if from_object:
        value = parsed if parsed is not None else {}
        text = json.dumps(value, ensure_ascii=False)
        error = None if isinstance(value, dict) else "arguments are not an object"
        return ToolCall(tool=name, input=value if error is None else None, id=call_id,
                        arguments=text, arguments_error=error)  # fmt: skip
    value, error = parse_arguments(arguments)
    return ToolCall(tool=name, input=value, id=call_id, arguments=arguments, arguments_error=error)


def openai_call_object(call: ToolCall, call_id: str) -> dict[str, Any]:
    """A call in OpenAI's Chat form (``{id, type: function, function: {name, arguments}}``)."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": call.tool, "arguments": arguments_text(call)},
    }


def arguments_text(call: ToolCall) -> str:
    """The arguments as text: as the model wrote them, else the JSON of the input."""
    if call.arguments is not None:
        return call.arguments
    return json.dumps(call.input if call.input is not None else {}, ensure_ascii=False)


def call_id(call: ToolCall, step: int, index: int) -> str:
    """The call's id, or one made up for it (Gemini may send none; results must name one)."""
    return call.id or f"call_{step}_{index}"


def answer_text(text: str, calls: Sequence[ToolCall]) -> str:
    """The reply's answer: its text, or (no text) its calls in OpenAI's Chat form as JSON."""
    if text.strip() or not calls:
        return text
    objects = [openai_call_object(call, call_id(call, 0, i)) for i, call in enumerate(calls)]
    return json.dumps(objects, ensure_ascii=False)


def legacy_answer(call: ToolCall) -> str:
    """A call as OpenAI's legacy ``function_call`` JSON (``{"name":..,"arguments":..}``).

    What promptfoo outputs for a reply to legacy ``functions``, written as its text checks
    read an object (compact JSON).
    """
    value = {"name": call.tool, "arguments": arguments_text(call)}
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def result_text(output: Any) -> str:
    """A canned tool result as the text sent back to the model (JSON unless it is text)."""
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def numbered(steps: Sequence[ToolStep]) -> list[tuple[int, ToolStep]]:
    """Each earlier step with its number (from 1), for making up call ids."""
    return list(enumerate(steps, start=1))
