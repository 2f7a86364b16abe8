"""Files in an answer, made text for a judge by the suite's preprocessors (AgentV).

An agent may answer with parts (its JSON output's last assistant message as a list of
``{type: text, text}`` and ``{type: file, path, media_type}`` blocks). A judge with
``preprocessors`` grades the text of those parts, as AgentV 4.42.4 does (measured):
text parts as written, each file as ``[[ file: PATH ]]`` and its text, joined by newlines.
A file whose media type has a preprocessor is the text its program prints (it reads
``{path, original_path, media_type}`` as JSON on stdin), run in the sandbox like a code
grader; any other file is read as UTF-8. A file that cannot be read or converted (binary
without a preprocessor, a program that fails, a remote URL) becomes a line
``[file preprocessing warning] PATH (TYPE): REASON`` after the text, so the judge knows.

Paths are read inside the case's workspace only (a relative path from it, or an absolute or
``file://`` path inside it): this service never shows a judge other files of its host.
"""

from __future__ import annotations

import dataclasses
import json
import mimetypes
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio.to_thread

from app.evaluators.base import EvaluationContext
from app.evaluators.code.programs import ProgramError
from app.evaluators.config import EvaluatorConfig, Preprocessor

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Largest answer file read as text for a judge."""
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_OFFICE = "application/vnd.openxmlformats-officedocument"
_TYPES = mimetypes.MimeTypes(filenames=())  # Python's own table: the same on every host
for _suffix, _kind in {
    ".xlsx": f"{_OFFICE}.spreadsheetml.sheet",
    ".docx": f"{_OFFICE}.wordprocessingml.document",
    ".pptx": f"{_OFFICE}.presentationml.presentation",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".md": "text/markdown",
}.items():
    _TYPES.add_type(_kind, _suffix)


def media_type(declared: str) -> str:
    """A preprocessor's or a file's type as AgentV compares them.

    Lower case; an extension (``xlsx``, ``.csv``) is read as its media type.
    """
    key = declared.strip().lower()
    if "/" in key:
        return key
    found, _ = _TYPES.guess_type("file." + key.lstrip("."), strict=False)
    return found or key


def has_files(context: EvaluationContext) -> bool:
    """Whether the candidate answered with file parts."""
    return any(part.get("type") == "file" for part in context.candidate.content)


async def with_preprocessed_files(
    config: EvaluatorConfig, context: EvaluationContext
) -> EvaluationContext:
    """``context`` with the candidate answer made of its parts, files as text.

    Unchanged when the judge has no preprocessors or the answer has no file parts.
    """
    if not config.preprocessors or not has_files(context):
        return context
    texts: list[str] = []
    warnings: list[str] = []
    for part in context.candidate.content:
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "file":
            text, warning = await _file_text(part, config, context)
            if text:
                texts.append(text)
            if warning:
                shown = f"{part.get('path')} ({part.get('media_type')})"
                warnings.append(f"[file preprocessing warning] {shown}: {warning}")
    answer = "\n".join(part for part in ["\n".join(texts), *warnings] if part)
    return dataclasses.replace(context, candidate_answer=answer)


async def _file_text(
    part: dict[str, Any], config: EvaluatorConfig, context: EvaluationContext
) -> tuple[str, str | None]:
    """The file's text for the judge, or why there is none."""
    written = str(part.get("path") or "")
    located = _locate(written, context.workspace_path)
    if isinstance(located, str):
        return "", located
    kind = media_type(str(part.get("media_type") or Path(written).suffix or ""))
    program = next((entry for entry in config.preprocessors if entry.type == kind), None)
    if program is not None:
        return await _converted(program, located, part, config, context)
    return await anyio.to_thread.run_sync(_read_text, located, written)


def _locate(written: str, workspace: str | None) -> Path | str:
    """The file inside the case's workspace, or why it cannot be read."""
    if written.lower().startswith("file://"):
        written = unquote(urlparse(written).path)
    elif _SCHEME.match(written):
        return "remote file paths are not supported for preprocessing"
    if not written:
        return "the file part names no path"
    if workspace is None:
        return "the case has no workspace to read the file from"
    root = Path(workspace).resolve()
    located = (root / written).resolve()
    if not located.is_relative_to(root):
        return "the file is outside the case's workspace"
    return located


def _read_text(located: Path, written: str) -> tuple[str, str | None]:
    try:
        with located.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return "", exc.strerror or str(exc)
    if len(data) > MAX_FILE_BYTES:
        return "", f"the file is larger than {MAX_FILE_BYTES} bytes"
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    if b"\0" in data or "\ufffd" in text:
        return "", "default UTF-8 read produced binary or invalid text; configure a preprocessor"
    return f"[[ file: {written} ]]\n{text}", None


async def _converted(
    program: Preprocessor,
    located: Path,
    part: dict[str, Any],
    config: EvaluatorConfig,
    context: EvaluationContext,
) -> tuple[str, str | None]:
    if context.programs is None or config.cwd is None:
        return "", "preprocessors run only with code graders enabled"
    stdin = {"path": str(located), "original_path": part.get("path"), "media_type": program.type}
    try:
        ran = await context.programs.run(
            program.command,
            json.dumps(stdin).encode(),
            folder=Path(config.cwd),
            workspace=Path(context.workspace_path) if context.workspace_path else None,
        )
    except ProgramError as exc:
        return "", str(exc)
    return f"[[ file: {part.get('path')} ]]\n{ran.stdout.strip()}", None
