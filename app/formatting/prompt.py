"""``format_prompt``: one case's messages and file texts -> question, guidelines, chatPrompt."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.formatting.chat_prompt import build_chat_prompt
from app.formatting.guidelines import guideline_matcher
from app.formatting.messages import FilePart, FormatOptions, FormattedPrompt, Message
from app.formatting.question import flat_question, marked_question, needs_role_markers
from app.formatting.segments import Segment, is_visible, message_segments

DEFAULT_OPTIONS = FormatOptions()


def referenced_files(messages: Sequence[Message]) -> list[str]:
    """Every file path the messages reference, in order of first reference, each once."""
    seen: dict[str, None] = {}
    for message in messages:
        if isinstance(message.content, list):
            for part in message.content:
                if isinstance(part, FilePart):
                    seen.setdefault(part.value, None)
    return list(seen)


def _guidelines(segments: Sequence[Sequence[Segment]]) -> tuple[str, tuple[str, ...]]:
    blocks: dict[str, str] = {}
    for parts in segments:
        for segment in parts:
            if segment.kind == "guideline" and segment.content is not None:
                content = segment.content.strip()
                blocks.setdefault(
                    segment.value, f'<file path="{segment.value}">\n{content}\n</file>'
                )
    return "\n\n".join(blocks.values()), tuple(blocks)


def _files_and_warnings(
    segments: Sequence[Sequence[Segment]], options: FormatOptions
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    file_paths: dict[str, None] = {}
    missing: dict[str, None] = {}
    for parts in segments:
        for segment in parts:
            if segment.kind in ("text", "image"):
                continue
            file_paths.setdefault(segment.value, None)
            if segment.content is None:
                missing.setdefault(segment.value, None)
    warnings = []
    for path in missing:
        if options.mode == "agent":
            warnings.append(f"file not found: {path} (rendered as a reference)")
        else:
            warnings.append(f"file not found: {path} (left out)")
    return tuple(file_paths), tuple(missing), tuple(warnings)


def format_prompt(
    messages: Sequence[Message],
    files: Mapping[str, str],
    options: FormatOptions = DEFAULT_OPTIONS,
) -> FormattedPrompt:
    """Format one case (DESIGN.md "Formatting rules").

    Args:
        messages: The case's input messages, in order.
        files: Already-loaded file texts keyed by the path exactly as the case wrote it.
            A referenced path missing here is reported in ``missing_files``.
        options: Mode, marker style, guideline patterns and system prompt.
    """
    is_guideline = guideline_matcher(tuple(options.guideline_patterns))
    segments = [message_segments(message, files, is_guideline) for message in messages]
    visible = [is_visible(parts, options.mode) for parts in segments]
    markers = needs_role_markers(messages, visible)
    if markers:
        question = marked_question(messages, segments, visible, options.mode, options.marker_style)
    else:
        question = flat_question(segments, options.mode)
    guidelines, guideline_paths = _guidelines(segments)
    chat_prompt = build_chat_prompt(
        messages,
        segments,
        visible,
        guidelines=guidelines,
        system_prompt=options.system_prompt,
        mode=options.mode,
        default_system_prompt=options.default_system_prompt,
    )
    file_paths, missing, warnings = _files_and_warnings(segments, options)
    attachments = (
        tuple((path, files[path]) for path in file_paths if path in files)
        if options.mode == "agent"
        else ()
    )
    return FormattedPrompt(
        question=question,
        guidelines=guidelines,
        guideline_paths=guideline_paths,
        chat_prompt=chat_prompt,
        role_markers=markers,
        file_paths=file_paths,
        missing_files=missing,
        warnings=warnings,
        attachments=attachments,
    )
