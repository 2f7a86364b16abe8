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
from app.formatting.messages import ChatMessage, ChatPart


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


def dropped_details(chat_prompt: Sequence[ChatMessage], api: str) -> list[str]:
    """The rewrites naming each image ``detail`` that ``api`` takes no setting for.

    Turns are numbered as the chatPrompt's, from 1 (as every rewrite numbers them).
    """
    return [
        f"image detail {image.image_url.detail!r} in turn {number} not sent: {api} takes no "
        "detail setting"
        for number, message in enumerate(chat_prompt, start=1)
        for image in message.images
        if image.image_url.detail is not None
    ]


def anthropic_blocks(parts: Sequence[ChatPart]) -> list[dict[str, Any]]:
    """Anthropic content blocks for a turn's pieces."""
    blocks: list[dict[str, Any]] = []
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
    return blocks


def gemini_parts(parts: Sequence[ChatPart]) -> list[dict[str, Any]]:
    """Gemini parts for a turn's pieces."""
    out: list[dict[str, Any]] = []
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
    return out
