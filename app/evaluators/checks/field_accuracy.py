"""``field_accuracy``: fields of a JSON answer compared with the case's expected output.

``fields: [{path, match, required=true, weight=1, tolerance, relative, formats}]``; ``path``
is dotted with indexes (``line_items[0].total``). ``match``: ``exact`` (deep equality),
``numeric_tolerance`` (``|got - expected| <= tolerance``, relative to the expected value when
``relative``), ``date`` (same calendar day, ISO, ``DD-MMM-YYYY``, ``MM/DD/YYYY`` or
``DD/MM/YYYY`` by ``formats``). The expected data is the last expected assistant message's
content (an object, or JSON text), else the reference answer read as JSON. A field without an
expected value counts as matched (in the weights too, as AgentV 4.42.4 counts it); a
missing optional field is left out. Score: the weighted
share of matched fields (``aggregation: all_or_nothing``: 1 only when all match).
"""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime
from typing import Any

from app.errors import EvaluatorConfigError
from app.evaluators.base import CaseView, EvaluationContext, EvaluatorOutcome
from app.evaluators.checks.json_checks import embedded_json
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult
from app.evaluators.verdicts import verdict_for

MATCHES = ("exact", "numeric_tolerance", "date")
_MISSING = object()
_PATH_PART = re.compile(r"[^.\[\]]+")
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {name: index for index, name in enumerate(_MONTH_NAMES, start=1)}
_NAMED_DATE = re.compile(r"(\d{1,2})-([A-Za-z]{3,9})-(\d{4})")
_NUMERIC_DATE = re.compile(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})")


def resolve(document: Any, path: str) -> Any:
    """The value at a dotted path with indexes, or ``_MISSING``."""
    current = document
    for part in _PATH_PART.findall(path):
        if isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            return _MISSING
    return current


def expected_data(case: CaseView) -> Any:
    """The expected JSON: the last expected assistant content, else the reference answer."""
    for message in reversed(case.expected_messages):
        if message.role != "assistant" or message.content is None:
            continue
        if isinstance(message.content, dict):
            return message.content
        if isinstance(message.content, str):
            return next(embedded_json(message.content), _MISSING)
    return next(embedded_json(case.reference_answer), _MISSING)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def parse_date(text: str, formats: list[str]) -> date | None:
    """A calendar day from ISO, ``DD-MMM-YYYY`` or numeric forms.

    Numeric dates are month first unless ``formats`` name only day-first forms or the
    numbers say so (a first number above 12).
    """
    text = text.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    if named := _NAMED_DATE.fullmatch(text):
        month = _MONTHS.get(named.group(2)[:3].lower())
        return _day(int(named.group(3)), month, int(named.group(1))) if month else None
    if numeric := _NUMERIC_DATE.fullmatch(text):
        first, second, year = (int(part) for part in numeric.groups())
        day_first = any(f.startswith("DD/MM") or f.startswith("DD-MM") for f in formats)
        month_first = any(f.startswith("MM/DD") or f.startswith("MM-DD") for f in formats)
        if first > 12 or (day_first and not month_first and second <= 12):
            return _day(year, second, first)
        return _day(year, first, second)
    return None


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _compare(field: dict[str, Any], got: Any, expected: Any) -> tuple[bool, str]:
    path, match = field["path"], field.get("match", "exact")
    if match == "numeric_tolerance":
        a, b = _number(got), _number(expected)
        if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
            return False, f"{path} (not a number)"
        diff = abs(a - b)
        allowed = float(field.get("tolerance", 0))
        measured = diff / abs(b) if field.get("relative") and b else diff
        held = measured <= allowed
        return held, f"{path} ({'within' if held else 'outside'} tolerance: diff={diff:g})"
    if match == "date":
        formats = [str(f) for f in field.get("formats", [])]
        a_day, b_day = parse_date(str(got), formats), parse_date(str(expected), formats)
        if a_day is None or b_day is None:
            return False, f"{path} (unreadable date {got if a_day is None else expected!r})"
        held = a_day == b_day
        return held, path if held else f"{path} (date {a_day} is not {b_day})"
    if got == expected and type(got) is type(expected):
        return True, path
    return False, f"{path} (got {json.dumps(got, ensure_ascii=False)[:80]})"


def _fields(config: EvaluatorConfig) -> list[dict[str, Any]]:
    fields = (config.model_extra or {}).get("fields")
    if not isinstance(fields, list) or not fields:
        raise EvaluatorConfigError(f"evaluator {config.name!r}: 'fields' must list fields")
    for field in fields:
        if not isinstance(field, dict) or not isinstance(field.get("path"), str):
            raise EvaluatorConfigError(f"evaluator {config.name!r}: each field needs a 'path'")
        if field.get("match", "exact") not in MATCHES:
            raise EvaluatorConfigError(
                f"evaluator {config.name!r}: field {field['path']!r} has an unknown match "
                f"{field.get('match')!r} ({', '.join(MATCHES)})"
            )
    return fields


class FieldAccuracyEvaluator:
    """Scores the weighted share of expected fields a JSON answer gets right."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Compare each configured field of the answer with the expected output."""
        fields = _fields(config)
        answer = next(embedded_json(context.candidate_answer), _MISSING)
        expected = expected_data(context.case)
        if answer is _MISSING or expected is _MISSING:
            what = "the answer" if answer is _MISSING else "the case's expected output"
            return _result(config, context, 0.0, [], [f"{what} holds no JSON"])
        scored: list[tuple[float, float]] = []
        hits: list[str] = []
        misses: list[str] = []
        for field in fields:
            weight = float(field.get("weight", 1.0))
            want, got = resolve(expected, field["path"]), resolve(answer, field["path"])
            if want is not _MISSING and got is _MISSING and not field.get("required", True):
                continue
            if want is _MISSING:  # nothing to compare with: matched, as in AgentV (measured)
                held, line = True, f"{field['path']} (no expected value)"
            elif got is _MISSING:
                held, line = False, f"{field['path']} (missing)"
            else:
                held, line = _compare(field, got, want)
            (hits if held else misses).append(line)
            scored.append((1.0 if held else 0.0, weight))
        if (config.model_extra or {}).get("aggregation") == "all_or_nothing":
            score = 0.0 if misses else 1.0
        else:
            total = sum(weight for _, weight in scored)
            score = sum(s * w for s, w in scored) / total if total else 1.0
        return _result(config, context, score, hits, misses)


def _result(
    config: EvaluatorConfig,
    context: EvaluationContext,
    score: float,
    hits: list[str],
    misses: list[str],
) -> EvaluatorOutcome:
    return EvaluatorOutcome(
        EvaluatorResult(
            name=config.name,
            type=config.type,
            score=score,
            verdict=verdict_for(score, context.thresholds),
            hits=hits,
            misses=misses,
            reasoning=f"{len(hits)} of {len(hits) + len(misses)} fields match",
            weight=config.weight,
        )
    )
