"""What a case gives a tool-calling candidate: tools, canned tool results, structured output.

Read from a test (AgentV's and the prompts/providers/vars layouts alike) and from the suite
(AgentV's suite keys; promptfoo's ``providers[].config``); the case's own win by name:

- ``tools``: function tools in any API's spelling (``app.settings.tools``), and tools the
  provider runs itself (``app.settings.hosted_tools``: web search, MCP...), kept apart in
  ``hosted``; ``tool_choice``.
- ``tool_results`` (or ``tool_mocks``): canned results, so the candidate's calls are answered
  and it goes on for up to ``max_turns`` provider calls (default 5). A mapping of tool name
  to result (any arguments), or a list of ``{tool, args?, result}`` whose ``args`` must be
  part of the call's arguments (the most specific entry wins). Without canned results the
  first reply is graded, as AgentV and promptfoo do. ``tools`` and ``tool_results`` may name
  a YAML or JSON file (``file://tools.yaml``, a mock tool file) holding the same.
- ``response_format``: structured output for the candidate, in OpenAI's form
  (``{type: json_schema, json_schema: {name, schema}}``) or a bare JSON Schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from app.errors import DocumentError
from app.evaluators.tool_calls.trajectory import contains
from app.settings.hosted_tools import HostedTool, merged_hosted
from app.settings.response_format import ResponseFormat, ResponseFormatError, read_response_format
from app.settings.tools import (
    ToolChoice,
    ToolsError,
    ToolSpec,
    merged_tools,
    read_tool_choice,
    read_tools,
)
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.documents.parsing import parse_yaml
from app.suites.tool_callbacks import ToolCallback

DEFAULT_MAX_TURNS = 5
TOOL_USE_KEYS = frozenset(
    {"tools", "tool_choice", "tool_results", "tool_mocks", "max_turns", "response_format"}
)
_ARGS_KEYS = ("args", "arguments", "input")
_RESULT_KEYS = ("result", "output", "response")


class CannedResult(BaseModel):
    """One canned tool result: for calls of ``tool`` whose arguments include ``args``."""

    model_config = ConfigDict(frozen=True)
    tool: str
    args: dict[str, Any] | None = None
    result: Any = None


class ToolUse(BaseModel):
    """A case's tools, canned results and structured output."""

    model_config = ConfigDict(frozen=True)
    tools: tuple[ToolSpec, ...] = ()
    hosted: tuple[HostedTool, ...] = ()
    tool_choice: ToolChoice | None = None
    results: tuple[CannedResult, ...] | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    response_format: ResponseFormat | None = None
    callbacks: tuple[ToolCallback, ...] = ()
    """promptfoo's ``functionToolCallbacks`` (``app.suites.tool_callbacks``)."""
    legacy_functions: bool = False
    """The tools are OpenAI's legacy ``functions`` (``prompts_vars.legacy_functions``)."""

    def merged_over(self, suite: ToolUse | None) -> ToolUse:
        """This case's settings over the suite's (tools by name, the rest when unset)."""
        if suite is None:
            return self
        return ToolUse(
            tools=merged_tools(suite.tools, self.tools),
            hosted=merged_hosted(suite.hosted, self.hosted),
            tool_choice=self.tool_choice or suite.tool_choice,
            results=self.results if self.results is not None else suite.results,
            max_turns=self.max_turns if self.max_turns != DEFAULT_MAX_TURNS else suite.max_turns,
            response_format=self.response_format or suite.response_format,
            callbacks=self.callbacks or suite.callbacks,
            legacy_functions=self.legacy_functions or suite.legacy_functions,
        )


def canned_result(
    results: tuple[CannedResult, ...], tool: str, arguments: Any
) -> CannedResult | None:
    """The result for a call: the entry of its tool with the most matching ``args``."""
    matching = [
        entry for entry in results
        if entry.tool == tool and (entry.args is None or contains(arguments, entry.args))
    ]  # fmt: skip
    return max(matching, key=lambda entry: len(entry.args or {}), default=None)


def _read_results(raw: Any, where: DocumentPath, findings: Findings) -> tuple[CannedResult, ...]:
    if isinstance(raw, str):
        findings.error(where, f"file {raw!r} was not read")
        return ()
    if isinstance(raw, dict):
        return tuple(CannedResult(tool=str(tool), result=value) for tool, value in raw.items())
    if not isinstance(raw, list):
        findings.error(where, f"must map tools to results, or list them, not {describe(raw)}")
        return ()
    entries: list[CannedResult] = []
    for index, item in enumerate(raw):
        tool = item.get("tool", item.get("name")) if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(tool, str) or not tool:
            findings.error((*where, index), "a canned result is {tool, args?, result}")
            continue
        args = next((item[key] for key in _ARGS_KEYS if key in item), None)
        if args is not None and not isinstance(args, dict):
            findings.error((*where, index), f"'args' must be a mapping, not {describe(args)}")
            continue
        result = next((item[key] for key in _RESULT_KEYS if key in item), None)
        entries.append(CannedResult(tool=tool, args=args, result=result))
    return tuple(entries)


def _read_format(raw: Any, where: DocumentPath, findings: Findings) -> ResponseFormat | None:
    if not isinstance(raw, dict):
        findings.error(
            where, f"must be a JSON Schema or OpenAI's response_format, not {describe(raw)}"
        )
        return None
    try:
        return read_response_format(raw)
    except ResponseFormatError as exc:
        findings.error(where, str(exc))
        return None


def _from_files(
    raw: Mapping[str, Any], path: DocumentPath, findings: Findings, texts: Mapping[str, str]
) -> dict[str, Any]:
    """``raw`` with the files its tool keys name (``file://...``) read (YAML, JSON)."""
    values = dict(raw)
    for key in ("tools", "tool_results", "tool_mocks", "response_format"):
        reference = raw.get(key)
        if not isinstance(reference, str):
            continue
        text = texts.get(reference.strip().removeprefix("file://"))
        if text is None:
            continue  # not read: the sources reported why
        try:
            values[key] = parse_yaml(text)
        except DocumentError as exc:
            findings.error((*path, key), f"file {reference!r}: {exc.detail}")
            values[key] = None
    return values


def read_tool_use(
    raw: Mapping[str, Any],
    path: DocumentPath,
    findings: Findings,
    texts: Mapping[str, str] | None = None,
) -> ToolUse | None:
    """The tool settings of a test (or a suite, or a provider's ``config``); None: none.

    ``tools`` and ``tool_results`` may name a file (a mock tool file) among ``texts``.
    """
    if not any(key in raw for key in TOOL_USE_KEYS):
        return None
    raw = _from_files(raw, path, findings, texts or {})
    fields: dict[str, Any] = {}
    hosted: list[HostedTool] = []
    try:
        fields["tools"] = read_tools(raw.get("tools"), "tools", hosted=hosted)
        fields["hosted"] = tuple(hosted)
        fields["tool_choice"] = read_tool_choice(raw.get("tool_choice"))
    except ToolsError as exc:
        findings.error((*path, "tools"), str(exc))
    key = "tool_results" if "tool_results" in raw else "tool_mocks"
    if key in raw and raw[key] is not None:
        fields["results"] = _read_results(raw[key], (*path, key), findings)
    turns = raw.get("max_turns")
    if turns is not None:
        if not isinstance(turns, int) or isinstance(turns, bool) or not 1 <= turns <= 50:
            findings.error(
                (*path, "max_turns"), f"must be a whole number from 1 to 50, not {describe(turns)}"
            )
        else:
            fields["max_turns"] = turns
    if raw.get("response_format") is not None:
        fields["response_format"] = _read_format(
            raw["response_format"], (*path, "response_format"), findings
        )
    return ToolUse(**fields)
