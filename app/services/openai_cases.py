"""A run's data source as cases: rows read, items checked, messages rendered, criteria attached.

Rows come inline (``file_content``) or from an uploaded file (``file_id``); each item must
match the eval's item schema. A ``completions`` run renders its template over
``{item}`` with the suite templates' sandbox (or takes the messages an ``item_reference``
names) and formats them once, as every run does; a ``jsonl`` run grades the row's
``sample.output_text`` and calls no model.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.errors import DocumentError, FieldError, InvalidRequest, PayloadTooLarge
from app.evaluation.openai_graders.models import GraderMessage
from app.evaluation.openai_graders.runner import criterion_config
from app.evaluators.checks.json_schemas import (
    SCHEMA_SECONDS,
    SchemaTimeout,
    schema_problem,
    validation_error,
)
from app.formatting import format_prompt
from app.formatting.messages import Message
from app.schemas.openai_evals import (
    CompletionsDataSource,
    FileContentSource,
    ItemReference,
    ResponsesDataSource,
    RunCreateRequest,
    SamplingParams,
    SourceRow,
)
from app.settings.response_format import ResponseFormat
from app.settings.tools import ToolsError, read_tools
from app.suites.documents.parsing import parse_json
from app.suites.model import EvalCase, FormattedCase
from app.suites.templates import TemplateProblem, render
from app.suites.tool_use import ToolUse


@dataclass(frozen=True)
class Rows:
    """The rows of a data source, and where they were read (for error paths)."""

    rows: list[SourceRow]
    where: str


def invalid(path: str, message: str) -> InvalidRequest:
    """A 400 on ``/v1`` (``param`` is ``path``) naming the offending value in ``message``."""
    return InvalidRequest(f"{path}: {message}", errors=[FieldError(path=path, message=message)])


def rows_of_file(content: str, file_id: str) -> list[SourceRow]:
    """The JSONL rows of an uploaded file: one ``{item, sample?}`` object per line.

    CPU only (a large file takes seconds): callers run it in a worker thread.

    Raises:
        InvalidRequest: A line that is not such an object (its number named).
    """
    rows = []
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(SourceRow.model_validate(parse_json(line)))
        except (ValueError, DocumentError) as exc:
            reason = (exc.detail if isinstance(exc, DocumentError) else str(exc)).splitlines()[0]
            raise invalid(
                "data_source.source.id",
                f"line {number} of file {file_id!r} is not an {{item, sample?}} object: {reason}",
            ) from None
    return rows


@dataclass(frozen=True)
class FileCheck:
    """What checking an upload found: its rows, or the problem (``param``, message)."""

    rows: int
    problem: tuple[str, str] | None = None


def check_file(content: bytes, filename: str) -> FileCheck:
    """Check every line of an upload (runs in the CPU process: small, picklable result)."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return FileCheck(0, ("file", f"{filename!r} is not UTF-8 text"))
    try:
        rows = len(rows_of_file(text, filename))
    except InvalidRequest as exc:
        error = exc.errors[0]
        return FileCheck(0, (error.path, error.message))
    if not rows:
        return FileCheck(0, ("file", f"{filename!r} holds no rows"))
    return FileCheck(rows)


ITEMS_SCHEMA_SECONDS = 10.0
"""Longest the items of one run request may take to check against the item schema."""


def check_items(rows: Sequence[SourceRow], schema: dict[str, Any], where: str) -> None:
    """Hold every item to the eval's item schema (CPU only: callers use a worker thread).

    Raises:
        InvalidRequest: The first item that does not match, with the schema's complaint;
            an item schema that cannot be used (stored before schemas were checked); items
            that take too long to check (a pattern that backtracks, a schema too large).
    """
    problem = schema_problem(schema)
    if problem is not None:
        raise invalid("data_source_config.item_schema", f"the eval's item schema {problem}")
    deadline = time.monotonic() + ITEMS_SCHEMA_SECONDS
    for index, row in enumerate(rows):
        left = min(SCHEMA_SECONDS, deadline - time.monotonic())
        try:
            if left <= 0:
                raise SchemaTimeout
            error = validation_error(schema, row.item, left)
        except SchemaTimeout:
            raise invalid(
                f"{where}[{index}].item",
                f"checking the items against the item schema took more than "
                f"{min(SCHEMA_SECONDS, ITEMS_SCHEMA_SECONDS):g}s per item or "
                f"{ITEMS_SCHEMA_SECONDS:g}s in all (a pattern that backtracks, or a schema too "
                "large)",
            ) from None
        if error is not None:
            at = "".join(f"[{p!r}]" for p in error.path)
            raise invalid(f"{where}[{index}].item{at}", error.message)


def _render(template: str, item: dict[str, Any], where: str) -> str:
    try:
        return render(template, {"item": item})
    except TemplateProblem as exc:
        raise invalid(where, str(exc)) from None


def _template_messages(
    template: Sequence[GraderMessage], item: dict[str, Any], index: int
) -> list[Message]:
    messages = []
    for position, message in enumerate(template):
        where = f"data_source.input_messages.template[{position}] (item {index})"
        text = "\n".join(_render(part, item, where) for part in message.texts())
        role = "system" if message.role == "developer" else message.role
        messages.append(Message(role=role, content=text))
    return messages


def _referenced_messages(reference: str, item: dict[str, Any], index: int) -> list[Message]:
    where = "data_source.input_messages.item_reference"
    value: Any = {"item": item}
    for key in reference.split("."):
        if not isinstance(value, dict) or key not in value:
            raise invalid(where, f"item {index} has no {reference!r}")
        value = value[key]
    if not isinstance(value, list):
        raise invalid(where, f"{reference!r} of item {index} is not a list of messages")
    try:
        return [
            Message(
                role="system" if m.role == "developer" else m.role, content="\n".join(m.texts())
            )
            for m in (GraderMessage.model_validate(entry) for entry in value)
        ]
    except ValueError as exc:
        raise invalid(where, f"{reference!r} of item {index}: {exc}") from None


def check_count(rows: int, max_cases: int) -> None:
    """Refuse a data source of more than ``max_cases`` rows.

    Raises:
        PayloadTooLarge: It has more (a 413 naming both and the setting).
    """
    if rows > max_cases:
        raise PayloadTooLarge(
            f"the data source has {rows} items; a run holds at most {max_cases} "
            "(EVAL_MAX_CASES_PER_RUN)"
        )


def build_cases(
    request: RunCreateRequest,
    rows: Sequence[SourceRow],
    criteria: Sequence[dict[str, Any]],
    judges: dict[str, str],
    max_cases: int,
) -> list[tuple[FormattedCase, str | None]]:
    """Each row as a formatted case with its criteria, and its given answer (JSONL runs)."""
    check_count(len(rows), max_cases)
    source = request.data_source
    tool_use = sampling_tool_use(getattr(source, "sampling_params", None))
    cases = []
    for index, row in enumerate(rows):
        configs = tuple(criterion_config(c, row.item, row.sample, judges) for c in criteria)
        if isinstance(source, CompletionsDataSource | ResponsesDataSource):
            inputs = source.input_messages
            if isinstance(inputs, ItemReference):
                messages = _referenced_messages(inputs.item_reference, row.item, index)
            else:
                messages = _template_messages(inputs.template, row.item, index)
            answer = None
        else:
            messages = [Message(role="user", content=json.dumps(row.item, ensure_ascii=False))]
            answer = _given_output(row)
        case = EvalCase(
            id=f"item-{index}",
            expected_outcome="",
            input_messages=tuple(messages),
            evaluators=configs,
            metadata={"item": row.item},
            tool_use=tool_use,
        )
        cases.append(
            (FormattedCase(case=case, prompt=format_prompt(case.input_messages, {})), answer)
        )
    return cases


def _given_output(row: SourceRow) -> str:
    text = (row.sample or {}).get("output_text")
    return text if isinstance(text, str) else ""


def inline_rows(source: FileContentSource) -> list[SourceRow]:
    """The rows given in the request."""
    return list(source.content)


PARAM = "data_source.sampling_params"
"""Where the candidate's tools and structured output are given (``sampling_tool_use``)."""


def _format(params: SamplingParams) -> ResponseFormat | None:
    if params.response_format is not None and params.text is not None:
        raise invalid(f"{PARAM}.text", "give response_format or text.format, not both")
    if params.response_format is not None:
        raw, field = params.response_format, f"{PARAM}.response_format"
        inner: Any = raw.get("json_schema") if raw.get("type") == "json_schema" else None
    elif params.text is not None:
        raw, field = params.text.get("format") or {}, f"{PARAM}.text.format"
        inner = raw if raw.get("type") == "json_schema" else None
    else:
        return None
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return ResponseFormat(schema={"type": "object"})
    if isinstance(inner, dict) and isinstance(inner.get("schema"), dict):
        return ResponseFormat(name=str(inner.get("name") or "response"), schema=inner["schema"])
    raise invalid(field, "must be text, json_object, or json_schema with a schema")


def sampling_tool_use(params: SamplingParams | None) -> ToolUse | None:
    """The tools and structured output the params give each case (None: neither)."""
    if params is None or (params.tools is None and params.response_format is None
                          and params.text is None):  # fmt: skip
        return None
    try:
        tools = read_tools(params.tools, f"{PARAM}.tools")
    except ToolsError as exc:
        raise invalid(f"{PARAM}.tools", str(exc)) from None
    return ToolUse(tools=tools, response_format=_format(params))
