"""An image file a promptfoo variable names (``file://photo.jpg``), as a ``data:`` URI.

promptfoo 0.123.1 reads such a variable as ``data:<type>;base64,<bytes>``, the media type
told by the file's first bytes, not by its name (measured: PNG bytes in ``x.jpg``, ``x.gif``,
``x.webp``, ``x.bmp``, ``x.svg`` and ``x.tiff`` are all ``image/png``; an ``.ico`` file is read
as text). Here the same: the bytes' type where they say one (PNG, JPEG, GIF, WebP, BMP, TIFF,
SVG), else the name's. The value is the image itself, so it runs anywhere an image part
does (``app.formatting.images``) and needs no fetching; the file's size is capped like every
referenced file's.
"""

from __future__ import annotations

import base64

IMAGE_SUFFIXES: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
}
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
)


def is_image(path: str) -> bool:
    """Whether a variable's file is read as an image (by its name, as promptfoo tells)."""
    return path.lower().endswith(tuple(IMAGE_SUFFIXES))


def media_type(data: bytes, path: str) -> str:
    """The image's media type: what its first bytes say, else what its name says."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    head = data[:256].lstrip().lower()
    if head.startswith((b"<svg", b"<?xml")) and b"<svg" in data[:4096].lower():
        return "image/svg+xml"
    suffix = "." + path.lower().rsplit(".", 1)[-1]
    return IMAGE_SUFFIXES.get(suffix, "application/octet-stream")


def image_data_uri(data: bytes, path: str) -> str:
    """The file as promptfoo gives it to a prompt: ``data:<type>;base64,<data>``."""
    return f"data:{media_type(data, path)};base64,{base64.b64encode(data).decode('ascii')}"
