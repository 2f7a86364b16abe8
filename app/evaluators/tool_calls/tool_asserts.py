"""promptfoo's graders of tool calls: ``trajectory:*`` and ``is-valid-openai-tools-call``.

They read the candidate's tool calls (``CandidateRun.tool_calls``: an API target's calls, an
agent's reported ones), in order. ``value`` holds the configuration, as promptfoo writes it:

- ``trajectory:tool-used``: a name, a list of names, or ``{name, min?, max?}`` (or
  ``names``); each tool is called at least ``min`` (1) and at most ``max`` times. Negated
  (``not-``), it passes when none of the tools was called.
- ``trajectory:tool-sequence``: ``{steps: [...], mode: in_order|exact}`` (or a list):
  ``in_order`` finds the steps in order with other calls between; ``exact`` wants exactly
  those calls.
- ``trajectory:tool-args-match``: ``{name, args, mode: partial|exact}``: some call of the tool
  has those arguments (``partial``: they are part of the call's).
- ``trajectory:step-count``: ``{min?, max?, name?}``: the number of tool calls (of ``name``
  only, when given) is within limits; ``type: llm`` counts provider calls instead.
- ``is-valid-openai-tools-call``: every call names an offered tool and its arguments are a
  JSON object valid for that tool's JSON Schema; ``is-valid-openai-function-call``: the same
  for the first call (OpenAI's legacy ``function_call``). ``is-valid-openai-tools-call`` on an
  answer with a hosted MCP tool's line (``MCP Tool Result (...)``, ``MCP Tool Error``) grades
  that line, as promptfoo does. ``is-valid-function-call`` (the spelling promptfoo's Gemini
  examples use, with ``functionDeclarations`` tools): every call, as the tools check. Without
  calls reported, the answer is read as OpenAI's ``tool_calls`` JSON (what the answer of a
  reply with only calls is).

Schemas are validated with a registry that retrieves nothing: a ``$ref`` to anything outside
the tool's schema is a failure naming it, never a download.

The score of the ``trajectory`` graders is the share of their checks met (a partial trajectory
scores in between); the others pass or fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import jsonschema
import referencing
import referencing.exceptions

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.tool_calls.trajectory import contains, trajectory_outcome
from app.providers.base import ToolCall
from app.providers.messages.tool_calls import api_call
from app.settings.tools import ToolSpec

Checks = tuple[list[str], list[str]]
"""Hits and misses."""


def _bad(config: EvaluatorConfig, what: str) -> EvaluatorConfigError:
    return EvaluatorConfigError(f"evaluator {config.name!r} ({config.type}): {what}")


def _names(config: EvaluatorConfig, value: Any) -> list[tuple[str, int, int | None]]:
    """``(tool, min, max)`` of a ``tool-used`` value."""
    if isinstance(value, str):
        return [(value, 1, None)]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [(item, 1, None) for item in value]
    if isinstance(value, dict):
        names = value.get("names", [value.get("name")])
        low, high = value.get("min", 1), value.get("max")
        if all(isinstance(n, str) for n in names) and isinstance(low, int):
            return [(name, low, high if isinstance(high, int) else None) for name in names]
    raise _bad(config, "'value' names the tool(s): a name, a list, or {name, min?, max?}")


def tool_used(config: EvaluatorConfig, calls: Sequence[ToolCall]) -> Checks:
    """Each named tool called within its limits (negated: none of them called)."""
    hits: list[str] = []
    misses: list[str] = []
    for name, low, high in _names(config, config.value):
        count = sum(call.tool == name for call in calls)
        if config.negate:
            line = f"{name}: called {count} times (required none)"
            (hits if count == 0 else misses).append(line)
            continue
        bound = f"≥{low}" + (f", ≤{high}" if high is not None else "")
        held = count >= low and (high is None or count <= high)
        (hits if held else misses).append(f"{name}: called {count} times (required {bound})")
    return hits, misses


def tool_sequence(config: EvaluatorConfig, calls: Sequence[ToolCall]) -> Checks:
    """The steps in order (``in_order``) or exactly (``exact``)."""
    value = config.value
    steps = value.get("steps") if isinstance(value, dict) else value
    mode = value.get("mode", "in_order") if isinstance(value, dict) else "in_order"
    if not isinstance(steps, list) or not all(isinstance(step, str) for step in steps):
        raise _bad(config, "'value.steps' lists tool names")
    if mode not in ("in_order", "exact"):
        raise _bad(config, f"mode {mode!r} is not in_order or exact")
    names = [call.tool for call in calls]
    hits: list[str] = []
    misses: list[str] = []
    if mode == "exact":
        for index, step in enumerate(steps):
            got = names[index] if index < len(names) else "nothing"
            line = f"Position {index}: {step}"
            (hits if got == step else misses).append(line if got == step else f"{line}, got {got}")
        if len(names) > len(steps):
            misses.append(f"{len(names) - len(steps)} calls more than the sequence")
        return hits, misses
    position = 0
    for step in steps:
        found = next((p for p in range(position, len(names)) if names[p] == step), None)
        if found is None:
            misses.append(f"{step} not found after position {position}")
        else:
            hits.append(f"Found {step} at position {found}")
            position = found + 1
    return hits, misses


def tool_args_match(config: EvaluatorConfig, calls: Sequence[ToolCall]) -> Checks:
    """Some call of the tool has the arguments (``partial``: part of them; ``exact``)."""
    value = config.value
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise _bad(config, "'value' is {name, args, mode?}")
    name, expected, mode = value["name"], value.get("args", {}), value.get("mode", "partial")
    if mode not in ("partial", "exact"):
        raise _bad(config, f"mode {mode!r} is not partial or exact")
    own = [call for call in calls if call.tool == name]
    for call in own:
        if contains(call.input, expected) if mode == "partial" else call.input == expected:
            return [f"{name} called with {json.dumps(call.input, ensure_ascii=False)}"], []
    if not own:
        return [], [f"{name} was not called"]
    seen = "; ".join(json.dumps(c.input, ensure_ascii=False) for c in own)
    return [], [f"{name} never called with {mode} arguments {json.dumps(expected)} (got {seen})"]


def step_count(
    config: EvaluatorConfig, calls: Sequence[ToolCall], llm_calls: int | None = None
) -> Checks:
    """The number of tool calls (or, ``type: llm``, provider calls) within limits."""
    value = config.value if isinstance(config.value, dict) else {}
    low, high = value.get("min"), value.get("max")
    if low is None and high is None:
        raise _bad(config, "'value' gives min and/or max")
    if value.get("type") in ("llm", "model", "generation"):
        count, what = llm_calls or 0, "provider calls"
    else:
        name = value.get("name")
        count = sum(name is None or call.tool == name for call in calls)
        what = f"calls of {name}" if name else "tool calls"
    held = (low is None or count >= low) and (high is None or count <= high)
    line = f"{count} {what} (min {low if low is not None else '–'}, max {high or '–'})"
    return ([line], []) if held else ([], [line])


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    kind = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    kind.check_schema(schema)
    return kind(schema, registry=referencing.Registry())  # retrieves nothing


def call_problem(call: ToolCall, tools: Sequence[ToolSpec]) -> str | None:
    """Why a call is not a valid call of one of ``tools`` (None: it is)."""
    tool = next((t for t in tools if t.name == call.tool), None)
    if tool is None:
        offered = ", ".join(t.name for t in tools) or "none"
        return f"{call.tool}: not an offered tool (offered: {offered})"
    if call.arguments_error is not None or not isinstance(call.input, dict):
        return f"{call.tool}: {call.arguments_error or 'arguments are not an object'}"
    try:
        error = next(iter(_validator(tool.parameters).iter_errors(call.input)), None)
    except (jsonschema.SchemaError, referencing.exceptions.Unresolvable) as exc:
        return f"{call.tool}: its schema cannot be used: {str(exc).splitlines()[0]}"
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(arguments)"
    return f"{call.tool}: arguments do not match its schema at {where}: {error.message}"


def calls_in_answer(answer: str) -> tuple[ToolCall, ...]:
    """Calls written in the answer as OpenAI's ``tool_calls`` JSON (or one ``function_call``)."""
    try:
        document = json.loads(answer)
    except ValueError:
        return ()
    if isinstance(document, dict):
        document = document.get("tool_calls", [document.get("function_call", document)])
    if not isinstance(document, list):
        return ()
    calls = []
    for item in document:
        function = item.get("function", item) if isinstance(item, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            raw = function.get("arguments")
            text = raw if isinstance(raw, str) else json.dumps(raw or {})
            calls.append(api_call(function["name"], call_id=item.get("id"), arguments=text))
    return tuple(calls)


_MCP_ERROR = re.compile(r"MCP Tool Error \(([^)]+)\): (.+)")
_MCP_RESULT = re.compile(r"MCP Tool Result \(([^)]+)\):")


def hosted_mcp_call(answer: str) -> Checks | None:
    """An answer with a hosted MCP tool's line (``hosted_output``): its call's outcome.

    promptfoo's ``is-valid-openai-tools-call`` passes on an ``MCP Tool Result`` and fails on
    an ``MCP Tool Error`` line (measured), before it looks for function calls.
    """
    if error := _MCP_ERROR.search(answer):
        return [], [f"MCP tool call failed for {error.group(1)}: {error.group(2)}"]
    if "MCP Tool Error" in answer:
        return [], ["MCP tool call failed for unknown: unknown error"]
    if result := _MCP_RESULT.search(answer):
        return [f"MCP tool call succeeded for {result.group(1)}"], []
    if "MCP Tool Result" in answer:
        return ["MCP tool call succeeded for unknown"], []
    return None


def valid_tools_call(context: EvaluationContext, *, first: bool, mcp: bool = False) -> Checks:
    """Every call (``first``: the first) is valid for the offered tools.

    With ``mcp``, an answer holding a hosted MCP tool's line is graded on that line.
    """
    if mcp and (outcome := hosted_mcp_call(context.candidate_answer)) is not None:
        return outcome
    calls = context.candidate.tool_calls or calls_in_answer(context.candidate_answer)
    if not calls:
        return [], ["the answer makes no tool call"]
    tools = context.candidate.tools
    hits: list[str] = []
    misses: list[str] = []
    for call in calls[:1] if first else calls:
        problem = call_problem(call, tools)
        (misses.append(problem) if problem else hits.append(f"{call.tool}: valid call"))
    return hits, misses


Grader = Callable[[EvaluatorConfig, EvaluationContext], Checks]

GRADERS: dict[str, Grader] = {
    "trajectory_tool_used": lambda c, x: tool_used(c, x.candidate.tool_calls),
    "trajectory_tool_sequence": lambda c, x: tool_sequence(c, x.candidate.tool_calls),
    "trajectory_tool_args_match": lambda c, x: tool_args_match(c, x.candidate.tool_calls),
    "trajectory_step_count": lambda c, x: step_count(
        c, x.candidate.tool_calls, x.candidate.llm_calls
    ),
    "is_valid_openai_tools_call": lambda _, x: valid_tools_call(x, first=False, mcp=True),
    "is_valid_openai_function_call": lambda _, x: valid_tools_call(x, first=True),
    "is_valid_function_call": lambda _, x: valid_tools_call(x, first=False),
}
"""Each canonical type's checks."""

_SELF_NEGATING = frozenset({"trajectory_tool_used"})
"""Types whose checks read ``negate`` themselves (the rest are inverted here)."""


class ToolCallsEvaluator:
    """One of ``GRADERS``: the share of its checks met (pass/fail types: all or nothing)."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Run the type's checks on the candidate's tool calls."""
        hits, misses = GRADERS[config.type](config, context)
        checks = len(hits) + len(misses)
        score = len(hits) / checks if checks else 0.0
        if not config.type.startswith("trajectory_"):
            score = 1.0 if not misses else 0.0
        if config.negate and config.type not in _SELF_NEGATING:
            score, hits, misses = 1.0 - score, misses, hits
        return trajectory_outcome(config, context, score, hits, misses)
