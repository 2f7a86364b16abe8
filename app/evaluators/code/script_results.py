"""What a promptfoo ``python`` or ``ruby`` assert returned, read as promptfoo 0.123.1 reads it.

Measured against promptfoo (tests/conformance/promptfoo/ruby.yaml and python.yaml), both
types read a result the same way, stricter than a ``javascript`` assert's:

- ``true``/``false``, or the text ``"true"``/``"false"`` in any case: pass or fail (score 1 or
  0);
- a grading result (a hash or dict, or text starting with ``{`` that parses as one) counts only
  with all three of ``pass`` (a boolean; ``pass_`` too), ``score`` (a number) and ``reason``
  (text): anything short of that fails the assert, and so does a ``score`` under the assert's
  ``threshold``;
- anything else is read as a number the way JavaScript's ``parseFloat`` reads its text
  (``"0.7"`` scores 0.7; ``nil``/``None``, a list or words fail): above 0 passes, or from
  ``threshold`` when the assert gives one.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from app.evaluators.config import EvaluatorConfig

_LEADING_NUMBER = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_SHOWN = 300
_WANTED = "{pass, score, reason}"


def script_verdict(config: EvaluatorConfig, result: Any, what: str) -> tuple[bool, float, str]:
    """``(passed, score, reason)`` of what a ``python``/``ruby`` assert returned (no negate)."""
    if isinstance(result, dict) and "__threw" in result:
        return False, 0.0, f"{what} threw: {result['__threw']}"
    if isinstance(result, str):
        result = _from_text(result)
    if isinstance(result, bool):
        return result, float(result), f"{what} returned {str(result).lower()}"
    if isinstance(result, dict) and "__undefined" not in result:
        return _grading_result(config, result, what)
    number = _number(result)
    if number is None:
        wanted = f"a boolean, a number or {_WANTED}"
        return False, 0.0, f"{what} must return {wanted}, not {_shown(result)}"
    mark = config.threshold
    held = number > 0 if mark is None else number >= mark
    return held, number, f"{what} returned {number:g}"


def _from_text(text: str) -> Any:
    """A text result as promptfoo reads it: a boolean, a parsed object, or the text.

    The text left is read as a number, or fails (``{`` that is no JSON object, say).
    """
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if not text.startswith("{"):
        return text
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text


def _grading_result(
    config: EvaluatorConfig, result: dict[str, Any], what: str
) -> tuple[bool, float, str]:
    passed = result.get("pass", result.get("pass_"))
    score, reason = result.get("score"), result.get("reason")
    numeric = isinstance(score, int | float) and not isinstance(score, bool)
    if not isinstance(passed, bool) or not numeric or not isinstance(reason, str):
        return False, 0.0, f"{what} must return {_WANTED} with all three, not {_shown(result)}"
    number = float(score)  # type: ignore[arg-type]
    mark = config.threshold
    if mark is not None and number < mark:
        below = f"{what}'s score {number:g} is below the threshold {mark:g}"
        return False, number, f"{below}: {reason}" if reason else below
    return passed, number, reason or f"{what}'s grading result"


def _number(result: Any) -> float | None:
    """``parseFloat(String(result))`` for a number or text; None when it is not a number."""
    if isinstance(result, int | float) and not isinstance(result, bool):
        return float(result)
    if not isinstance(result, str):
        return None  # null, undefined, a list: promptfoo reads none of them as a number
    found = _LEADING_NUMBER.match(result.lstrip())
    if found is None:
        return None
    number = float(found.group(0).replace("Infinity", "inf"))
    return None if math.isnan(number) else number


def _shown(result: Any) -> str:
    if isinstance(result, dict) and "__undefined" in result:
        return "nothing (nil/None)"
    return json.dumps(result, ensure_ascii=False, default=str)[:_SHOWN]
