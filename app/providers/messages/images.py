"""A turn's text pieces and images in each API's own blocks (pure).

Images are passed as written: an ``http(s)`` URL as a URL the provider fetches, a ``data:``
URI's base64 bytes inline; nothing is fetched, decoded or re-encoded here. Chat Completions
takes the parts as they are (``openai_content_parts`` in ``turns``); the Responses API as
``input_text``/``input_image`` (``detail`` is required there: ``auto``, the API's default,
when the part gives none); Anthropic as ``image`` blocks (``source`` ``url`` or
``base64``); Gemini as ``fileData`` (a URL, with its media type when the path's extension
names one) or ``inlineData``. Anthropic and Gemini take no ``detail``: a part's detail is
named in the rewrites, not sent.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from app.formatting.images import ImagePart
from app.formatting.messages import ChatPart


def responses_content(parts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions content parts as Responses input content."""
    content: list[dict[str, Any]] = []
    for part in parts:
        if part["type"] == "image_url":
            image = part["image_url"]
            content.append({"type": "input_image", "image_url": image["url"],
                            "detail": image.get("detail", "auto")})  # fmt: skip
        else:
            content.append({"type": "input_text", "text": part["text"]})
    return content


def _dropped_detail(part: ImagePart, api: str, turn: int) -> list[str]:
    detail = part.image_url.detail
    if detail is None:
        return []
    return [f"image detail {detail!r} in turn {turn} not sent: {api} takes no detail setting"]


def anthropic_blocks(
    parts: Sequence[ChatPart], turn: int
) -> tuple[list[dict[str, Any]], list[str]]:
    """Anthropic content blocks for a turn's pieces, and the rewrites made."""
    blocks: list[dict[str, Any]] = []
    rewrites: list[str] = []
    for part in parts:
        if not isinstance(part, ImagePart):
            blocks.append({"type": "text", "text": part.text})
            continue
        data = part.data
        source = (
            {"type": "url", "url": part.url}
            if data is None
            else {"type": "base64", "media_type": data[0], "data": data[1]}
        )
        blocks.append({"type": "image", "source": source})
        rewrites += _dropped_detail(part, "Anthropic", turn)
    return blocks, rewrites


def gemini_parts(parts: Sequence[ChatPart], turn: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Gemini parts for a turn's pieces, and the rewrites made."""
    out: list[dict[str, Any]] = []
    rewrites: list[str] = []
    for part in parts:
        if not isinstance(part, ImagePart):
            out.append({"text": part.text})
            continue
        data = part.data
        if data is None:
            media_type = mimetypes.guess_type(urlsplit(part.url).path)[0]
            file_data = {"fileUri": part.url}
            if media_type is not None and media_type.startswith("image/"):
                file_data["mimeType"] = media_type
            out.append({"fileData": file_data})
        else:
            out.append({"inlineData": {"mimeType": data[0], "data": data[1]}})
        rewrites += _dropped_detail(part, "Gemini", turn)
    return out, rewrites
