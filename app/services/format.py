"""Serve a ``/format`` request: resolve the referenced files, call the core, shape the reply."""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from app.errors import FieldError, InvalidRequest
from app.formatting import FormatOptions, Message, format_prompt
from app.formatting.messages import FilePart
from app.providers.base import ProviderRequest
from app.providers.registry import ProviderRegistry
from app.schemas.format import FormatRequest, FormatResponse
from app.settings import Settings
from app.suites.files.resolve import FileSource

LOOP_MESSAGES = 200
"""Cases with more messages than this are formatted in a worker thread."""


def file_locations(messages: Sequence[Message]) -> dict[str, str]:
    """Where each referenced file is first referenced: ``input_messages[i].content[j].value``."""
    locations: dict[str, str] = {}
    for m_index, message in enumerate(messages):
        if isinstance(message.content, list):
            for p_index, part in enumerate(message.content):
                if isinstance(part, FilePart):
                    where = f"input_messages[{m_index}].content[{p_index}].value"
                    locations.setdefault(part.value, where)
    return locations


def missing_files_error(locations: dict[str, str], missing: Sequence[str]) -> InvalidRequest:
    """A 422 naming each referenced file that was not supplied, where it was referenced."""
    errors = [
        FieldError(path=locations[path], message=f"file not found: {path}") for path in missing
    ]
    return InvalidRequest(
        f"referenced files were not found: {', '.join(missing)} (send them in `files`, or set "
        "`allow_missing_files: true`)",
        errors=errors,
        title="Referenced file not found",
    )


async def format_case(
    request: FormatRequest, settings: Settings, providers: ProviderRegistry
) -> FormatResponse:
    """Format one case as ``POST /format`` describes.

    Files come from the request's ``files`` first, then the operator's workspace roots; a
    file not found is a 422 in LM mode (unless allowed), a warned reference in agent mode.
    """
    locations = file_locations(request.input_messages)
    source = FileSource.from_settings(settings, request.files)
    loaded = await source.load(list(locations), locations=locations)
    options = FormatOptions(
        mode=request.mode,
        marker_style=request.marker_style,
        guideline_patterns=tuple(request.guideline_patterns),
        system_prompt=request.system_prompt,
        default_system_prompt=request.default_system_prompt,
    )
    if len(request.input_messages) <= LOOP_MESSAGES:
        formatted = format_prompt(request.input_messages, loaded.files, options)
    else:  # tens of thousands of messages take seconds of CPU: off the event loop
        formatted = await anyio.to_thread.run_sync(
            format_prompt, request.input_messages, loaded.files, options
        )
    if formatted.missing_files and request.mode == "lm" and not request.allow_missing_files:
        raise missing_files_error(locations, formatted.missing_files)
    previews = None
    if request.providers:
        candidate = ProviderRequest.for_candidate(formatted).model_copy(
            update={"tools": request.tools, "tool_choice": request.tool_choice}
        )
        previews = providers.preview(request.providers, candidate)
    return FormatResponse(
        question=formatted.question,
        guidelines=formatted.guidelines,
        guideline_paths=list(formatted.guideline_paths),
        chat_prompt=list(formatted.chat_prompt),
        role_markers=formatted.role_markers,
        warnings=list(formatted.warnings),
        provider_requests=previews,
    )
