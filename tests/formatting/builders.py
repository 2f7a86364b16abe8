"""Small builders for formatting tests."""

from __future__ import annotations

from typing import Any

from app.formatting import FormatOptions, FormattedPrompt, Message, format_prompt


def msg(role: str, content: Any) -> Message:
    return Message.model_validate({"role": role, "content": content})


def file(path: str) -> dict[str, str]:
    return {"type": "file", "value": path}


def text(value: str) -> dict[str, str]:
    return {"type": "text", "value": value}


def fmt(
    messages: list[Message], files: dict[str, str] | None = None, **options: Any
) -> FormattedPrompt:
    return format_prompt(messages, files or {}, FormatOptions(**options))
