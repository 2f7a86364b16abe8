"""Segments: each message's content split into text, file and guideline-reference pieces."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from app.formatting.images import ImagePart, image_marker
from app.formatting.messages import FilePart, Message, Mode, TextPart

SegmentKind = Literal["text", "file", "guideline", "image"]


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of a message: text, a file, a reference to a guideline file, or an image.

    ``value`` is the text (for text), the path exactly as the case wrote it, or an image's
    URL; ``content`` is a file's text with normalised line endings, or ``None`` when it was
    not supplied; ``image`` is the image part as written.
    """

    kind: SegmentKind
    value: str
    content: str | None = None
    image: ImagePart | None = None


def normalise_newlines(text: str) -> str:
    """Turn CRLF and lone CR line endings into LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def pretty_json(value: Any) -> str:
    """``value`` as JSON with a 2-space indent, non-ASCII kept."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # integers beyond 64 bits and other values orjson refuses
        return json.dumps(value, indent=2, ensure_ascii=False)


def message_segments(
    message: Message,
    files: Mapping[str, str],
    is_guideline: Callable[[str], bool],
) -> list[Segment]:
    """Split one message's content into segments, in order; blank text is dropped."""
    content = message.content
    if isinstance(content, str):
        return [Segment("text", normalise_newlines(content))] if content.strip() else []
    if isinstance(content, dict):
        return [Segment("text", pretty_json(content))]
    segments: list[Segment] = []
    for part in content:
        if isinstance(part, str | TextPart):
            text = part if isinstance(part, str) else part.value
            if text.strip():
                segments.append(Segment("text", normalise_newlines(text)))
        elif isinstance(part, FilePart):
            path = part.value
            kind: SegmentKind = "guideline" if is_guideline(path) else "file"
            loaded = files.get(path)
            content_text = None if loaded is None else normalise_newlines(loaded)
            segments.append(Segment(kind, path, content_text))
        elif isinstance(part, ImagePart):
            segments.append(Segment("image", part.url, image=part))
    return segments


def render_segment(segment: Segment, mode: Mode) -> str:
    """A segment as it appears in a prompt; ``""`` when it shows nothing."""
    if segment.kind == "text":
        return segment.value.strip()
    if segment.kind == "guideline":
        return f"<Attached: {segment.value}>"
    if segment.image is not None:
        return image_marker(segment.image)
    if mode == "agent":
        return f'<file: path="{segment.value}">'
    body = (segment.content or "").strip()
    return f'<file path="{segment.value}">\n{body}\n</file>' if body else ""


def is_visible(segments: list[Segment], mode: Mode) -> bool:
    """Whether a message shows anything besides guideline references (an image shows)."""
    for segment in segments:
        if segment.kind in ("text", "image"):
            return True
        if segment.kind == "file" and (mode == "agent" or (segment.content or "").strip()):
            return True
    return False
