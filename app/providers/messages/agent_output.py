"""What an agent program reports besides its answer: tool calls, tokens, cost, duration. PURE.

A ``cli`` target's program may write plain text (the answer) or a JSON object in AgentV's
output format:

```json
{"text": "the answer",
 "output": [{"role": "assistant", "content": "...",
             "tool_calls": [{"tool": "search", "input": {...}, "output": {...}, "id": "1"}]}],
 "trace": [{"type": "tool_call", "id": "1", "name": "search", "input": {...}},
           {"type": "tool_result", "id": "1", "output": {...}}],
 "token_usage": {"input": 120, "output": 40}, "cost_usd": 0.0012,
 "duration_ms": 3400, "llm_calls": 2}
```

An object is read this way only when it has ``text`` (a string) or ``output`` /
``output_messages`` (a list of messages); anything else is the answer as written. The answer
is ``text``, else the last assistant message's content (JSON when it is not a string). Tool
calls come from the messages' ``tool_calls`` in order, else from ``trace`` events. When
that content is a list of blocks with files in it (``{"type": "file", "path":
"out/report.xlsx", "media_type": "..."}``, AgentV's ``ContentFile``), the blocks are kept too
(``content``): a judge with ``preprocessors`` grades their text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from app.providers.base import ToolCall, Usage


@dataclass(frozen=True)
class AgentOutput:
    """An agent program's answer and what it reported of its work."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    duration_ms: float | None = None
    llm_calls: int | None = None
    content: tuple[dict[str, Any], ...] = ()


def parse_agent_output(raw: str) -> AgentOutput | None:
    """The structured output of an agent program, or None when ``raw`` is a plain answer."""
    stripped = raw.strip()
    if not stripped.startswith("{"):
        return None
    try:
        document = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    messages = document.get("output", document.get("output_messages"))
    text = document.get("text")
    if not isinstance(text, str) and not isinstance(messages, list):
        return None
    messages = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    calls = _message_calls(messages) or _trace_calls(document.get("trace"))
    return AgentOutput(
        text=text if isinstance(text, str) else _last_assistant_text(messages),
        tool_calls=calls,
        usage=_usage(document.get("token_usage")),
        cost_usd=_number(document.get("cost_usd")),
        duration_ms=_number(document.get("duration_ms")),
        llm_calls=_count(document.get("llm_calls")),
        content=_file_content(messages),
    )


def _file_content(messages: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """The last assistant message's blocks when some are files (``{type: file, path}``)."""
    for message in reversed(messages):
        if message.get("role") == "assistant" and message.get("content") is not None:
            content = message["content"]
            blocks = (
                tuple(b for b in content if isinstance(b, dict))
                if isinstance(content, list)
                else ()
            )
            files = any(b.get("type") == "file" and isinstance(b.get("path"), str) for b in blocks)
            return blocks if files else ()
    return ()


def _last_assistant_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "assistant" and message.get("content") is not None:
            content = message["content"]
            return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return ""


def _message_calls(messages: list[dict[str, Any]]) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for message in messages:
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("tool"), str):
                calls.append(
                    ToolCall(
                        tool=call["tool"],
                        input=call.get("input"),
                        output=call.get("output"),
                        id=_text(call.get("id")),
                    )
                )
    return tuple(calls)


def _trace_calls(trace: Any) -> tuple[ToolCall, ...]:
    """Tool calls of ``tool_call`` events, each with the output of its ``tool_result``."""
    if not isinstance(trace, list):
        return ()
    events = [event for event in trace if isinstance(event, dict)]
    outputs = {
        event.get("id"): event.get("output")
        for event in events
        if event.get("type") == "tool_result" and event.get("id") is not None
    }
    return tuple(
        ToolCall(
            tool=event["name"],
            input=event.get("input"),
            output=outputs.get(event.get("id")),
            id=_text(event.get("id")),
        )
        for event in events
        if event.get("type") == "tool_call" and isinstance(event.get("name"), str)
    )


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(input_tokens=_count(raw.get("input")), output_tokens=_count(raw.get("output")))


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _count(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None
