"""Referenced paths: their lookup form, their parts, and decoding a file's bytes as text."""

from __future__ import annotations

import re

from app.errors import FileRefused

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


def normalise_path(path: str) -> str:
    """The lookup form of a path: backslashes read as ``/``, leading ``./`` dropped."""
    normalised = path.replace("\\", "/")
    while normalised.startswith("./"):
        normalised = normalised[2:].lstrip("/")
    return normalised


def split_reference(path: str) -> tuple[tuple[str, ...], bool]:
    r"""The parts of a referenced path and whether it starts at the workspace root.

    ``/x`` (one leading slash) names ``x`` under the workspace root, as AgentV reads it.

    Raises:
        FileRefused: The path is absolute otherwise (``//x``, ``\\\\x``, ``C:x``), empty, or
            holds NUL.
    """
    if "\x00" in path:
        raise FileRefused("the path holds a NUL character, which no file name can")
    normalised = normalise_path(path)
    from_root = normalised.startswith("/") and not normalised.startswith("//")
    if from_root:
        normalised = normalised[1:]
    if normalised.startswith("/") or _WINDOWS_DRIVE.match(normalised):
        raise FileRefused("absolute paths are not allowed; give a path relative to the suite")
    parts = tuple(part for part in normalised.split("/") if part not in ("", "."))
    if not parts:
        raise FileRefused("the path names no file")
    return parts, from_root


def relative_parts(path: str) -> tuple[str, ...]:
    """The parts of a path relative to the suite or the root (see ``split_reference``)."""
    return split_reference(path)[0]


def decode_text(data: bytes) -> str:
    r"""Decode a file's bytes as UTF-8 text with ``\\n`` line endings.

    Raises:
        FileRefused: The bytes are not UTF-8, or hold NUL bytes (binary content).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileRefused(f"the file is not UTF-8 text (bad byte at offset {exc.start})") from exc
    if "\x00" in text:
        raise FileRefused("the file is binary (it contains NUL bytes), not text")
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def refuse_escape(parts: tuple[str, ...]) -> None:
    """Refuse a relative path whose ``..`` parts climb above its starting folder."""
    depth = 0
    for part in parts:
        depth += -1 if part == ".." else 1
        if depth < 0:
            raise FileRefused("the path leaves the workspace root ('..')")
