"""Image content parts: OpenAI's ``{type: image_url, image_url: {url, detail?}}``.

An image is carried through the message model as written and sent natively to API targets
(each adapter's own form); in text (the ``question``, the chatPrompt's ``content``, the
judge's prompt) it shows as a marker: ``<image: URL>``, or for a ``data:`` URI its media type
and size (``<image: data:image/png, 1234 bytes>``), never its bytes. This service never
fetches an image's URL: the provider does, which is why remote URLs need the operator's
opt-in (``app.suites.image_policy``).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic_core import PydanticCustomError

ImageDetail = Literal["auto", "low", "high", "original"]
DETAILS: tuple[str, ...] = ("auto", "low", "high", "original")
_DATA_URI = re.compile(r"data:(image/[A-Za-z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})")
_REMOTE = re.compile(r"https?://[^\s/]+\S*", re.IGNORECASE)


class ImageUrl(BaseModel):
    """Where an image is: an ``http(s)`` URL or a base64 ``data:image/...`` URI, and its detail."""

    model_config = ConfigDict(frozen=True)
    url: str
    detail: ImageDetail | None = None


class ImagePart(BaseModel):
    """An image part of a user turn, in OpenAI's Chat Completions form."""

    model_config = ConfigDict(frozen=True)
    type: Literal["image_url"] = "image_url"
    image_url: ImageUrl

    @property
    def url(self) -> str:
        """The image's URL as written."""
        return self.image_url.url

    @property
    def data(self) -> tuple[str, str] | None:
        """``(media type, base64 data)`` of a ``data:`` URI; None for a remote URL."""
        found = _DATA_URI.fullmatch(self.url)
        return (found.group(1), found.group(2)) if found else None

    @property
    def remote(self) -> bool:
        """Whether the provider has to fetch the image (an ``http(s)`` URL)."""
        return self.data is None


def _base64_bytes(data: str) -> int:
    return len(data) * 3 // 4 - len(data) + len(data.rstrip("="))


def image_marker(part: ImagePart) -> str:
    """How an image shows in text: its URL, or a data URI's media type and size."""
    data = part.data
    if data is None:
        return f"<image: {part.url}>"
    return f"<image: data:{data[0]}, {_base64_bytes(data[1])} bytes>"


def parse_image_part(index: int, part: dict[str, Any]) -> ImagePart:
    """An ``image_url`` part, checked: the URL's form, the detail, no other keys."""
    extra = sorted(set(part) - {"type", "image_url"})
    if extra:
        raise _problem(index, f"an image_url part takes only 'image_url', not {extra[0]!r}")
    image = part.get("image_url")
    if not isinstance(image, dict) or not isinstance(image.get("url"), str):
        raise _problem(index, "an image_url part needs 'image_url: {url, detail?}' (url a string)")
    extra = sorted(set(image) - {"url", "detail"})
    if extra:
        raise _problem(index, f"image_url takes 'url' and 'detail', not {extra[0]!r}")
    url, detail = image["url"], image.get("detail")
    if detail is not None and detail not in DETAILS:
        raise _problem(index, f"image_url.detail is one of {', '.join(DETAILS)}, not {detail!r}")
    if url.lower().startswith("data:"):
        if _DATA_URI.fullmatch(url) is None:
            raise _problem(
                index,
                "an image's data: URI must be 'data:image/<type>;base64,<data>' (base64 "
                f"image data), not {url[:40]!r}...",
            )
    elif _REMOTE.fullmatch(url) is None:
        raise _problem(
            index, f"an image's url must be an http(s) URL or a data:image URI, not {url[:80]!r}"
        )
    return ImagePart(image_url=ImageUrl(url=url, detail=detail))


def _problem(index: int, message: str) -> PydanticCustomError:
    return PydanticCustomError("content_part", message, {"part_index": index})
