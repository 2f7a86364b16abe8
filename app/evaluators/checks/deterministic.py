"""Checks that need no judge: text containment, prefixes, equality, patterns, word counts.

Each check passes (score 1) or fails (score 0); ``negate: true`` (or promptfoo's ``not-``
prefix) inverts the outcome. ``value`` is a string or a list of strings: ``contains`` /
``icontains`` with a list need every value (as ``-all``), ``-any`` forms need one. The
``i`` forms ignore case (Unicode case folding). ``starts_with`` / ``ends_with`` compare with
the answer stripped of surrounding whitespace; ``equals`` compares both trimmed; ``regex``
searches the pattern anywhere; ``word_count`` counts whitespace-separated words against
``min`` / ``max``. JSON checks live in ``json_checks``. ``regex`` patterns are JavaScript's
(both AgentV and promptfoo run them in JavaScript), so they run in V8 (``js_engine``).

Graders with ``semantics: promptfoo`` compare as promptfoo does (JavaScript strings): the
answer is never trimmed, the ``i`` forms fold case with ``toLowerCase`` (``lower``: no
``ß`` -> ``ss``), and ``equals`` with an object or list value compares the answer's JSON
with it, structurally.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.code.js_engine import JsError, regex_test, run_in_thread
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult
from app.evaluators.verdicts import verdict_for


@dataclass(frozen=True)
class CheckOutcome:
    """Whether the check held, and a sentence saying what was found."""

    held: bool
    description: str


Check = Callable[[EvaluatorConfig, str], CheckOutcome]


def text_values(config: EvaluatorConfig) -> list[str]:
    """``value`` as a list of strings (a string is a list of one)."""
    value = config.value
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return list(value)
    raise EvaluatorConfigError(
        f"evaluator {config.name!r} ({config.type}): 'value' must be a string or a list of strings"
    )


def _listed(values: list[str]) -> str:
    return ", ".join(map(repr, values))


def _folder(config: EvaluatorConfig) -> Callable[[str], str]:
    """How the ``i`` forms ignore case: JavaScript's ``toLowerCase`` or Unicode folding."""
    return str.lower if config.semantics == "promptfoo" else str.casefold


def _containment(*, fold: bool, need_all: bool) -> Check:
    def check(config: EvaluatorConfig, answer: str) -> CheckOutcome:
        values = text_values(config)
        folded = _folder(config)
        haystack = folded(answer) if fold else answer
        found = [v for v in values if (folded(v) if fold else v) in haystack]
        absent = [v for v in values if v not in found]
        case = " (ignoring case)" if fold else ""
        if need_all and absent:
            return CheckOutcome(False, f"answer does not contain {_listed(absent)}{case}")
        if not need_all and not found:
            return CheckOutcome(False, f"answer contains none of {_listed(values)}{case}")
        return CheckOutcome(True, f"answer contains {_listed(found)}{case}")

    return check


check_contains = _containment(fold=False, need_all=True)
check_contains_any = _containment(fold=False, need_all=False)
check_icontains = _containment(fold=True, need_all=True)
check_icontains_any = _containment(fold=True, need_all=False)


def _single_text(config: EvaluatorConfig) -> str:
    if not isinstance(config.value, str):
        raise EvaluatorConfigError(
            f"evaluator {config.name!r} ({config.type}): 'value' is a string"
        )
    return config.value


def check_starts_with(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """The answer (leading whitespace aside) starts with ``value``."""
    value = _single_text(config)
    if (answer if config.semantics == "promptfoo" else answer.lstrip()).startswith(value):
        return CheckOutcome(True, f"answer starts with {value!r}")
    return CheckOutcome(False, f"answer does not start with {value!r}")


def check_ends_with(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """The answer (trailing whitespace aside) ends with ``value``."""
    value = _single_text(config)
    if (answer if config.semantics == "promptfoo" else answer.rstrip()).endswith(value):
        return CheckOutcome(True, f"answer ends with {value!r}")
    return CheckOutcome(False, f"answer does not end with {value!r}")


def check_regex(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """The ``value`` pattern matches somewhere in the answer, as JavaScript's ``test`` says.

    Runs in V8 (``js_engine``) within its time limit: call it off the event loop
    (``RegexEvaluator``).
    """
    if not isinstance(config.value, str):
        raise EvaluatorConfigError(f"evaluator {config.name!r} (regex): 'value' must be a pattern")
    flags = str((config.model_extra or {}).get("flags") or "")
    shown = f"/{config.value}/{flags}"
    try:
        found = regex_test(config.value, flags, answer)
    except JsError as exc:
        raise EvaluatorConfigError(f"evaluator {config.name!r} (regex): {exc}") from None
    if found:
        return CheckOutcome(True, f"answer matches {shown}")
    return CheckOutcome(False, f"answer does not match {shown}")


def _equals_exactly(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """The ``equals`` of promptfoo: the very text, or the answer's JSON equal to an object value."""
    value = config.value
    if isinstance(value, dict | list):
        shown = json.dumps(value, ensure_ascii=False)
        try:
            parsed = json.loads(answer)
        except ValueError:
            return CheckOutcome(False, f"answer is not JSON equal to {shown}")
        if strictly_equal(parsed, value):
            return CheckOutcome(True, f"answer is JSON equal to {shown}")
        return CheckOutcome(False, f"answer is not JSON equal to {shown}")
    expected = value if isinstance(value, str) else json.dumps(value)
    if answer == expected:
        return CheckOutcome(True, f"answer equals {expected!r}")
    return CheckOutcome(False, f"answer does not equal {expected!r}")


def strictly_equal(left: object, right: object) -> bool:
    """Deep equality where ``true`` is not ``1`` (as JavaScript's strict equality)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(
            strictly_equal(item, right[key]) for key, item in left.items()
        )
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(strictly_equal, left, right))
    return left == right


def check_equals(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """The trimmed answer equals ``value`` (non-strings compared as their JSON text)."""
    if config.semantics == "promptfoo":
        return _equals_exactly(config, answer)
    value = config.value
    expected = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if answer.strip() == expected.strip():
        return CheckOutcome(True, f"answer equals {expected.strip()!r}")
    return CheckOutcome(False, f"answer does not equal {expected.strip()!r}")


def word_limits(config: EvaluatorConfig) -> tuple[int | None, int | None]:
    """``(min, max)`` of a ``word_count`` grader (at least one is given)."""
    extra = config.model_extra or {}
    low, high = extra.get("min"), extra.get("max")
    for key, limit in (("min", low), ("max", high)):
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
            raise EvaluatorConfigError(f"evaluator {config.name!r}: '{key}' must be a whole number")
    if low is None and high is None:
        raise EvaluatorConfigError(f"evaluator {config.name!r}: give 'min' and/or 'max' words")
    return low, high


def check_word_count(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """The answer has at least ``min`` and at most ``max`` whitespace-separated words."""
    low, high = word_limits(config)
    count = len(answer.split())
    parts = [f"at least {low}"] if low is not None else []
    if high is not None:
        parts.append(f"at most {high}")
    limits = " and ".join(parts)
    held = (low is None or count >= low) and (high is None or count <= high)
    verb = "within" if held else "outside"
    return CheckOutcome(held, f"answer has {count} words, {verb} the limits ({limits})")


class RegexEvaluator:
    """``check_regex`` in a worker thread: a slow pattern never holds the event loop.

    The regex graders of a case share its CPU budget (``app.evaluators.offload.cpu``): eight slow
    patterns stop at the budget, not at eight times V8's limit per search.
    """

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Search the candidate answer (inverted by ``negate``)."""
        async with context.cpu.spending(config.name):
            outcome = await run_in_thread(check_regex, config, context.candidate_answer)
        return EvaluatorOutcome(result=check_result(config, context, outcome))


class DeterministicEvaluator:
    """Runs one check function and turns it into a pass (1.0) or fail (0.0) result.

    A ``heavy`` check (a pattern, a schema) runs in a worker thread under the case's CPU
    budget (``app.evaluators.offload.cpu``): it cannot hold the event loop. ``light`` says when a
    heavy check is cheap enough to run here (the hop to a thread costs more than it).
    """

    def __init__(
        self,
        check: Check,
        *,
        heavy: bool = False,
        light: Callable[[EvaluatorConfig, str], bool] | None = None,
    ) -> None:
        self._check = check
        self._heavy = heavy
        self._light = light

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Apply the check to the candidate answer (inverted by ``negate``).

        The description states what was found, so it reads right with or without ``negate``.
        """
        answer = context.candidate_answer
        if self._heavy and not (self._light and self._light(config, answer)):
            outcome = await context.cpu.run(config.name, lambda: self._check(config, answer))
        else:
            outcome = self._check(config, answer)
        return EvaluatorOutcome(result=check_result(config, context, outcome))


def check_result(
    config: EvaluatorConfig, context: EvaluationContext, outcome: CheckOutcome
) -> EvaluatorResult:
    """The pass (1) or fail (0) result of a check, inverted by ``negate``."""
    held = outcome.held != config.negate
    score = 1.0 if held else 0.0
    return EvaluatorResult(
        name=config.name,
        type=config.type,
        score=score,
        verdict=verdict_for(score, context.thresholds),
        hits=[outcome.description] if held else [],
        misses=[] if held else [outcome.description],
        reasoning=outcome.description,
        weight=config.weight,
    )
