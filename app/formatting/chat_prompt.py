"""The ``chatPrompt``: one consolidated system message, then the other turns natively."""

from __future__ import annotations

from collections.abc import Sequence

from app.formatting.messages import ChatMessage, Message, Mode
from app.formatting.question import render_turn_body, render_turn_parts
from app.formatting.segments import Segment

GUIDELINES_HEADER = "[[ ## Guidelines ## ]]"


def build_chat_prompt(
    messages: Sequence[Message],
    segments: Sequence[Sequence[Segment]],
    visible: Sequence[bool],
    *,
    guidelines: str,
    system_prompt: str | None,
    mode: Mode,
    default_system_prompt: str = "",
) -> tuple[ChatMessage, ...]:
    """Build the provider-neutral message list.

    The system message holds, in order: the system prompt (else, when the case has no
    system turn of its own, the default system prompt), the guidelines block, then the
    text and files of every system turn wherever it stood (its guideline references are
    left out: their content is in the guidelines block). Other visible turns follow in
    order with their own roles; their guideline references stay as ``<Attached: path>``,
    and a turn with images also carries its pieces in order (``ChatMessage.parts``).
    """
    system_parts: list[str] = []
    if system_prompt and system_prompt.strip():
        system_parts.append(system_prompt.strip())
    elif default_system_prompt.strip() and not _has_system_turn(messages, segments, mode):
        system_parts.append(default_system_prompt.strip())
    if guidelines:
        system_parts.append(f"{GUIDELINES_HEADER}\n\n{guidelines}")
    turns: list[ChatMessage] = []
    for message, parts, shown in zip(messages, segments, visible, strict=True):
        if message.role == "system":
            body = render_turn_body(parts, mode, references=False)
            if body:
                system_parts.append(body)
        elif shown:
            turns.append(
                ChatMessage(
                    role=message.role,
                    content=render_turn_body(parts, mode),
                    parts=render_turn_parts(parts, mode),
                )
            )
    if system_parts:
        turns.insert(0, ChatMessage(role="system", content="\n\n".join(system_parts)))
    return tuple(turns)


def _has_system_turn(
    messages: Sequence[Message], segments: Sequence[Sequence[Segment]], mode: Mode
) -> bool:
    """Whether a system turn says something (then the default system prompt stays out)."""
    return any(
        message.role == "system" and render_turn_body(parts, mode, references=False)
        for message, parts in zip(messages, segments, strict=True)
    )
