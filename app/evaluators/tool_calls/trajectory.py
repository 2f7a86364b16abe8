"""``tool_trajectory`` and ``skill_trigger``: graders of the tool calls a target reports.

A target reports tool calls with its answer (``ProviderResponse.tool_calls``: the mock
target's ``tool_calls``, a CLI program's AgentV JSON output). ``tool_trajectory`` modes:

- ``any_order``: each tool of ``minimums`` (``{tool: count}``) is called at least that often;
- ``in_order``: the ``expected`` tools appear in that order, other calls between them allowed;
- ``exact``: the calls are exactly the ``expected`` ones, in order;
- ``superset``: every ``expected`` call is found (each actual call used once), extras allowed;
- ``subset``: every actual call is one of the ``expected`` (which may repeat).

An expected item is ``{tool, args?, input?, output?, args_match?}``. ``args`` (or ``input``)
are compared with ``args_match`` (the item's, else the grader's, else ``exact``): ``exact``
(equal), ``superset`` (the call has every expected key, equal), ``subset`` (the call has no
key the expected lacks), ``ignore``, or a list of dotted fields to compare; ``args: any``
skips the comparison. ``output`` must be contained in the call's output (a partial match).
The score is the share of expected items (or minimums) met.

``skill_trigger`` passes when a tool call invoked the skill ``skill`` (a ``Skill`` tool whose
input names it, or a read of its ``SKILL.md``); ``should_trigger: false`` inverts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult
from app.evaluators.verdicts import verdict_for
from app.providers.base import ToolCall

MODES = ("any_order", "in_order", "exact", "superset", "subset")
ARGS_MATCHES = ("exact", "superset", "subset", "ignore")


def contains(actual: Any, expected: Any) -> bool:
    """Whether ``expected`` is part of ``actual`` (mappings by key, lists item by item)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and contains(actual[key], value) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) >= len(expected)
            and all(contains(a, e) for a, e in zip(actual, expected, strict=False))
        )
    return bool(actual == expected)


def _field(document: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(document, dict) or part not in document:
            return None
        document = document[part]
    return document


def args_match(expected: Any, actual: Any, how: Any) -> bool:
    """Whether a call's arguments match an expected item's (see the module docstring)."""
    if expected is None or expected == "any" or how == "ignore":
        return True
    actual = actual if isinstance(actual, dict) else {}
    if isinstance(how, list):
        return all(_field(actual, str(path)) == _field(expected, str(path)) for path in how)
    if not isinstance(expected, dict):
        return bool(actual == expected)
    if how == "superset":
        return all(key in actual and actual[key] == value for key, value in expected.items())
    if how == "subset":
        return all(key in expected and expected[key] == value for key, value in actual.items())
    return bool(actual == expected)


class _Spec:
    """A trajectory grader's configuration, checked."""

    def __init__(self, config: EvaluatorConfig) -> None:
        extra = config.model_extra or {}
        self.name = config.name
        self.mode = extra.get("mode", "any_order" if "minimums" in extra else "in_order")
        self.args_match = extra.get("args_match", extra.get("argsMatch", "exact"))
        self.minimums = extra.get("minimums") or {}
        self.expected = extra.get("expected") or []
        if self.mode not in MODES:
            raise EvaluatorConfigError(f"evaluator {self.name!r}: unknown mode {self.mode!r}")
        if not isinstance(self.minimums, dict) or not isinstance(self.expected, list):
            raise EvaluatorConfigError(
                f"evaluator {self.name!r}: 'minimums' maps tools to counts, 'expected' lists calls"
            )
        for item in self.expected:
            if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
                raise EvaluatorConfigError(
                    f"evaluator {self.name!r}: each expected item needs 'tool'"
                )

    def matches(self, item: dict[str, Any], call: ToolCall) -> bool:
        """Whether ``call`` is the expected ``item`` (tool, arguments and output)."""
        if call.tool != item["tool"]:
            return False
        how = item.get("args_match", item.get("argsMatch", self.args_match))
        expected_args = item.get("args", item.get("input"))
        if not args_match(expected_args, call.input, how):
            return False
        return "output" not in item or contains(call.output, item["output"])


def _any_order(spec: _Spec, calls: Sequence[ToolCall]) -> tuple[list[str], list[str]]:
    hits: list[str] = []
    misses: list[str] = []
    for tool, minimum in spec.minimums.items():
        count = sum(call.tool == tool for call in calls)
        line = f"{tool}: called {count} times (at least {minimum})"
        (hits if count >= int(minimum) else misses).append(line)
    return hits, misses


def _in_order(spec: _Spec, calls: Sequence[ToolCall]) -> tuple[list[str], list[str]]:
    hits: list[str] = []
    misses: list[str] = []
    position = 0
    for index, item in enumerate(spec.expected):
        found = next((p for p in range(position, len(calls)) if spec.matches(item, calls[p])), None)
        if found is None:
            misses.append(f"expected {item['tool']} (item {index}) not found in order")
        else:
            hits.append(f"{item['tool']} at position {found}")
            position = found + 1
    return hits, misses


def _exact(spec: _Spec, calls: Sequence[ToolCall]) -> tuple[list[str], list[str]]:
    hits: list[str] = []
    misses: list[str] = []
    for index, item in enumerate(spec.expected):
        call = calls[index] if index < len(calls) else None
        if call is not None and spec.matches(item, call):
            hits.append(f"position {index}: {item['tool']}")
        else:
            got = call.tool if call is not None else "nothing"
            misses.append(f"position {index}: expected {item['tool']}, got {got}")
    if len(calls) > len(spec.expected):
        misses.append(f"{len(calls) - len(spec.expected)} calls more than expected")
    return hits, misses


def _superset(spec: _Spec, calls: Sequence[ToolCall]) -> tuple[list[str], list[str]]:
    hits: list[str] = []
    misses: list[str] = []
    free = list(range(len(calls)))
    for item in spec.expected:
        found = next((p for p in free if spec.matches(item, calls[p])), None)
        if found is None:
            misses.append(f"expected {item['tool']} was not called")
        else:
            free.remove(found)
            hits.append(f"{item['tool']} called")
    return hits, misses


def _subset(spec: _Spec, calls: Sequence[ToolCall]) -> tuple[list[str], list[str]]:
    hits: list[str] = []
    misses: list[str] = []
    for position, call in enumerate(calls):
        allowed = any(spec.matches(item, call) for item in spec.expected)
        line = f"{call.tool} at position {position}"
        (hits if allowed else misses).append(line + ("" if allowed else " is not allowed"))
    return hits, misses


_MODES = {
    "any_order": _any_order,
    "in_order": _in_order,
    "exact": _exact,
    "superset": _superset,
    "subset": _subset,
}


def trajectory_outcome(
    config: EvaluatorConfig,
    context: EvaluationContext,
    score: float,
    hits: list[str],
    misses: list[str],
) -> EvaluatorOutcome:
    """A grader's result over the candidate's tool calls: its score, hits and misses."""
    return EvaluatorOutcome(
        EvaluatorResult(
            name=config.name,
            type=config.type,
            score=score,
            verdict=verdict_for(score, context.thresholds),
            hits=hits,
            misses=misses,
            reasoning=f"{len(hits)} of {len(hits) + len(misses)} tool-call checks met",
            weight=config.weight,
            details={"tool_calls": [call.tool for call in context.candidate.tool_calls]},
        )
    )


class ToolTrajectoryEvaluator:
    """Compares the reported tool calls with the expected trajectory."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """The share of expected calls (or minimums) the reported calls meet."""
        spec = _Spec(config)
        calls = context.candidate.tool_calls
        if not calls and spec.mode != "subset":
            return trajectory_outcome(
                config, context, 0.0, [], ["the target reported no tool calls"]
            )
        hits, misses = _MODES[spec.mode](spec, calls)
        checks = len(hits) + len(misses)
        score = len(hits) / checks if checks else 1.0
        if spec.mode == "exact" and len(calls) > len(spec.expected):
            score = min(score, len(hits) / max(len(calls), 1))
        return trajectory_outcome(config, context, score, hits, misses)


def invokes_skill(call: ToolCall, skill: str) -> bool:
    """Whether a call invokes ``skill``: a ``Skill`` tool naming it, or a read of its SKILL.md."""
    text = str(call.input) if call.input is not None else ""
    if call.tool.lower() == "skill":
        return skill in text
    return f"{skill}/SKILL.md" in text.replace("\\", "/")


class SkillTriggerEvaluator:
    """Passes when the reported tool calls invoke the skill (or not, ``should_trigger: false``)."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Score 1 when the skill was invoked as the grader expects, else 0."""
        extra = config.model_extra or {}
        skill = extra.get("skill", config.value)  # promptfoo's skill-used names it in value
        if not isinstance(skill, str) or not skill.strip():
            raise EvaluatorConfigError(f"evaluator {config.name!r}: 'skill' names the skill")
        expected = extra.get("should_trigger", True) is not False
        triggered = any(invokes_skill(call, skill) for call in context.candidate.tool_calls)
        held = triggered == expected
        line = f"skill {skill!r} was {'' if triggered else 'not '}invoked"
        return trajectory_outcome(
            config, context, 1.0 if held else 0.0, [line] if held else [], [] if held else [line]
        )
