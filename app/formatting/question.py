"""The ``question`` string: flat, or every visible turn under an ``@[Role]:`` marker line."""

from __future__ import annotations

from collections.abc import Sequence

from app.formatting.messages import ChatPart, ChatText, MarkerStyle, Message, Mode
from app.formatting.segments import Segment, render_segment

_ROLE_LABELS = {"system": "System", "user": "User", "assistant": "Assistant", "tool": "Tool"}


def role_marker(role: str, style: MarkerStyle) -> str:
    """The marker line of a turn: ``@[User]:`` (default) or the legacy ``[User]:``."""
    label = _ROLE_LABELS[role]
    return f"@[{label}]:" if style == "at" else f"[{label}]:"


def needs_role_markers(messages: Sequence[Message], visible: Sequence[bool]) -> bool:
    """Markers iff some turn is assistant or tool, or more than one message is visible."""
    if any(message.role in ("assistant", "tool") for message in messages):
        return True
    return sum(visible) > 1


def render_turn_body(segments: Sequence[Segment], mode: Mode, *, references: bool = True) -> str:
    """A turn's rendered segments joined by newlines (guideline references optional)."""
    rendered = (
        render_segment(segment, mode)
        for segment in segments
        if references or segment.kind != "guideline"
    )
    return "\n".join(text for text in rendered if text)


def render_turn_parts(segments: Sequence[Segment], mode: Mode) -> tuple[ChatPart, ...]:
    """A turn's pieces in order when it holds images (``()`` without images).

    Each rendered text piece of ``render_turn_body`` is a text part, each image as written.
    """
    if not any(segment.image is not None for segment in segments):
        return ()
    parts: list[ChatPart] = []
    for segment in segments:
        if segment.image is not None:
            parts.append(segment.image)
        elif text := render_segment(segment, mode):
            parts.append(ChatText(text=text))
    return tuple(parts)


def marked_question(
    messages: Sequence[Message],
    segments: Sequence[Sequence[Segment]],
    visible: Sequence[bool],
    mode: Mode,
    style: MarkerStyle,
) -> str:
    """Every visible turn as a marker line plus its body, turns separated by a blank line."""
    turns = [
        f"{role_marker(message.role, style)}\n{render_turn_body(parts, mode)}"
        for message, parts, shown in zip(messages, segments, visible, strict=True)
        if shown
    ]
    return "\n\n".join(turns)


def flat_question(segments: Sequence[Sequence[Segment]], mode: Mode) -> str:
    """Every rendered segment of every message, empty ones dropped, blank-line separated."""
    rendered = (render_segment(segment, mode) for parts in segments for segment in parts)
    return "\n\n".join(text for text in rendered if text)
