"""Serve a ``/format`` request: resolve the referenced files, call the core, shape the reply."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from app.container import Services
from app.errors import FieldError, InvalidRequest
from app.formatting import FormatOptions, FormattedPrompt, Message, format_prompt
from app.formatting.messages import FilePart
from app.schemas.format import FormatRequest, FormatResponse


def _file_locations(messages: Sequence[Message]) -> Iterator[tuple[str, str]]:
    """(document path, file path) of every file part."""
    for m_index, message in enumerate(messages):
        if isinstance(message.content, list):
            for p_index, part in enumerate(message.content):
                if isinstance(part, FilePart):
                    yield f"input_messages[{m_index}].content[{p_index}].value", part.value


def missing_files_error(messages: Sequence[Message], missing: Sequence[str]) -> InvalidRequest:
    """A 422 naming each referenced file that was not supplied, where it was referenced."""
    wanted = set(missing)
    errors = [
        FieldError(path=where, message=f"file not found: {path}")
        for where, path in _file_locations(messages)
        if path in wanted
    ]
    names = ", ".join(missing)
    return InvalidRequest(
        f"referenced files were not supplied: {names} (send them in `files`, or set "
        "`allow_missing_files: true`)",
        errors=errors,
        title="Referenced file not found",
    )


def check_missing(
    messages: Sequence[Message], formatted: FormattedPrompt, *, allow: bool, mode: str
) -> None:
    """Refuse missing files in LM mode unless allowed (agent mode renders references)."""
    if formatted.missing_files and mode == "lm" and not allow:
        raise missing_files_error(messages, formatted.missing_files)


async def format_case(request: FormatRequest, services: Services) -> FormatResponse:
    """Format one case as ``POST /format`` describes."""
    options = FormatOptions(
        mode=request.mode,
        marker_style=request.marker_style,
        guideline_patterns=tuple(request.guideline_patterns),
        system_prompt=request.system_prompt,
    )
    formatted = format_prompt(request.input_messages, request.files, options)
    check_missing(
        request.input_messages, formatted, allow=request.allow_missing_files, mode=request.mode
    )
    return FormatResponse(
        question=formatted.question,
        guidelines=formatted.guidelines,
        guideline_paths=list(formatted.guideline_paths),
        chat_prompt=list(formatted.chat_prompt),
        role_markers=formatted.role_markers,
        warnings=list(formatted.warnings),
    )
