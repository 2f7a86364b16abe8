"""Fields every dialect's cases share: input messages, expected messages, reference answers.

Each reader hands these functions the raw values; they check the shapes, render template
fields when the case has variables, and record every ``{type: file}`` part they meet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from app.evaluators.expected import ExpectedMessage
from app.formatting.messages import FilePart, Message, TextPart
from app.formatting.segments import message_segments, pretty_json, render_segment
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import MISSING, Findings, describe, pick
from app.suites.reading import References, Renderer, add_reference


def user_message(text: str) -> Message:
    """The one user turn a string ``input`` stands for."""
    return Message(role="user", content=text)


def _render_content(content: Any, path: DocumentPath, render: Renderer) -> Any:
    """Template text in string content, text parts, image parts and object content.

    A text part's ``value`` (or OpenAI's ``text``) and an image part's ``image_url`` (its
    ``url`` from a variable, say) are rendered.
    """
    if isinstance(content, str | dict):
        return render.value(content, path)
    if not isinstance(content, list):
        return content
    rendered: list[Any] = []
    for index, part in enumerate(content):
        if isinstance(part, str):
            rendered.append(render.text(part, (*path, index)))
        elif isinstance(part, dict) and part.get("type") == "text" and "value" in part:
            rendered.append({**part, "value": render.value(part["value"], (*path, index))})
        elif isinstance(part, dict) and part.get("type") == "text" and "text" in part:
            rendered.append({**part, "text": render.value(part["text"], (*path, index))})
        elif isinstance(part, dict) and part.get("type") == "image_url" and "image_url" in part:
            image = render.value(part["image_url"], (*path, index, "image_url"))
            rendered.append({**part, "image_url": image})
        else:
            rendered.append(part)
    return rendered


def _record_files(content: Any, path: DocumentPath, references: References) -> None:
    if not isinstance(content, list | tuple):
        return
    for index, part in enumerate(content):
        if isinstance(part, FilePart):
            add_reference(references, part.value, (*path, index, "value"))


def read_message(
    raw: Any,
    path: DocumentPath,
    findings: Findings,
    references: References,
    render: Renderer,
) -> Message | None:
    """One ``{role, content}`` input message (None when it is wrong; errors recorded)."""
    if not isinstance(raw, dict):
        findings.error(path, f"a message must be a mapping, not {describe(raw)}")
        return None
    for required in ("role", "content"):
        if required not in raw:
            findings.error((*path, required), "is required")
    if "role" not in raw or "content" not in raw:
        return None
    item = {**raw, "content": _render_content(raw["content"], (*path, "content"), render)}
    try:
        message = Message.model_validate(item)
    except ValidationError as exc:
        findings.validation_error(path, exc)
        return None
    _record_files(message.content, (*path, "content"), references)
    return message


def read_messages(
    value: Any,
    path: DocumentPath,
    findings: Findings,
    references: References,
    render: Renderer,
) -> tuple[Message, ...]:
    """A list of input messages; a string is one user message."""
    if isinstance(value, str):
        return (user_message(render.text(value, path)),)
    if not isinstance(value, list):
        findings.error(path, f"must be a list of {{role, content}} messages, not {describe(value)}")
        return ()
    messages = [
        read_message(item, (*path, index), findings, references, render)
        for index, item in enumerate(value)
    ]
    return tuple(message for message in messages if message is not None)


def picked_expected(
    raw: Mapping[str, Any],
    keys: Sequence[str],
    path: DocumentPath,
    findings: Findings,
    references: References,
    render: Renderer,
) -> tuple[ExpectedMessage, ...]:
    """The expected messages under the first of ``keys`` given (none when none is)."""
    key, value = pick(raw, keys, path, findings)
    value = None if value is MISSING else value
    return read_expected(value, (*path, key), findings, references, render)


def read_expected(
    value: Any,
    path: DocumentPath,
    findings: Findings,
    references: References,
    render: Renderer,
) -> tuple[ExpectedMessage, ...]:
    """Expected messages: a list of messages, or a string or object (one assistant turn).

    A message may carry ``content``, ``tool_calls`` or both.
    """
    if value is None:
        return ()
    if isinstance(value, str | dict) and not _is_message(value):
        content = render.value(value, path)
        return (ExpectedMessage(role="assistant", content=content),)
    items = [value] if isinstance(value, dict) else value
    if not isinstance(items, list):
        findings.error(
            path, f"must be a list of messages, a string or an object, not {describe(value)}"
        )
        return ()
    expected: list[ExpectedMessage] = []
    for index, item in enumerate(items):
        where = path if isinstance(value, dict) else (*path, index)
        message = _expected_message(item, where, findings, references, render)
        if message is not None:
            expected.append(message)
    return tuple(expected)


def _is_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "role" in value
        and ("content" in value or "tool_calls" in value)
    )


def _expected_message(
    raw: Any,
    path: DocumentPath,
    findings: Findings,
    references: References,
    render: Renderer,
) -> ExpectedMessage | None:
    if not isinstance(raw, dict):
        findings.error(path, f"a message must be a mapping, not {describe(raw)}")
        return None
    tool_calls = raw.get("tool_calls")
    if tool_calls is not None and not (
        isinstance(tool_calls, list) and all(isinstance(call, dict) for call in tool_calls)
    ):
        findings.error((*path, "tool_calls"), "must be a list of tool calls (mappings)")
        return None
    if "content" not in raw and tool_calls is None:
        findings.error((*path, "content"), "is required (or 'tool_calls')")
        return None
    checked = {key: raw[key] for key in ("role",) if key in raw}
    checked["content"] = raw.get("content", "")
    message = read_message(checked, path, findings, references, render)
    if message is None:
        return None
    return ExpectedMessage(
        role=message.role,
        content=message.content if "content" in raw else None,
        tool_calls=tuple(render.value(tool_calls or [], (*path, "tool_calls"))),
    )


def reference_answer(messages: Sequence[ExpectedMessage], files: Mapping[str, str]) -> str:
    """The reference answer: the last expected message's content.

    A string as it is; content with file parts as the prompt shows files (text, then each
    ``<file path>`` block, joined by blank lines); other content as pretty JSON; a message
    with only tool calls gives the JSON of its tool calls.
    """
    if not messages:
        return ""
    last = messages[-1]
    content = last.content
    if content is None:
        return pretty_json(list(last.tool_calls))
    if isinstance(content, str):
        return content
    if isinstance(content, list) and any(isinstance(part, FilePart) for part in content):
        segments = message_segments(Message(role="assistant", content=content), files, _never)
        return "\n\n".join(text for text in (render_segment(s, "lm") for s in segments) if text)
    return pretty_json(_plain(content))


def _never(_: str) -> bool:
    return False


def _plain(content: Any) -> Any:
    if isinstance(content, list):
        return [
            part.model_dump() if isinstance(part, TextPart | FilePart) else part for part in content
        ]
    return content
