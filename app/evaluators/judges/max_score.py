"""promptfoo's ``max-score``: the arm whose other graders scored its answer highest passes.

Measured on promptfoo 0.123.1 (tests/conformance/promptfoo/max_score.yaml): an arm's score is
the mean of its other graders' scores, each weighted by ``value.weights`` of its type (1
when not given); ``method: sum`` adds them instead. The first arm with the highest score is
selected (score 1, passed) even at 0, the others not (0); with ``value.threshold`` no arm is
selected when the highest score is below it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.evaluators.catalog import find_type
from app.evaluators.results import EvaluatorResult

METHODS = ("avg", "sum")


def options_problem(value: Any) -> str | None:
    """Why a ``max-score`` value is not ``{weights?, method?, threshold?}``, or None."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"must be a mapping {{weights, method, threshold}}, not {type(value).__name__}"
    extra = sorted(set(value) - {"weights", "method", "threshold"})
    if extra:
        return f"unknown option(s) {', '.join(extra)}: weights, method and threshold are read"
    weights = value.get("weights", {})
    if not isinstance(weights, dict) or not all(
        isinstance(w, int | float) and not isinstance(w, bool) and w >= 0 for w in weights.values()
    ):
        return "weights must map grader types to numbers from 0"
    unknown = [name for name in weights if find_type(str(name))[0] is None]
    if unknown:
        return f"weights name no grader type: {', '.join(map(str, unknown))}"
    if value.get("method", "avg") not in METHODS:
        return f"method must be one of {', '.join(METHODS)}"
    threshold = value.get("threshold")
    if threshold is not None and (
        not isinstance(threshold, int | float) or isinstance(threshold, bool)
    ):
        return "threshold must be a number"
    return None


def arm_score(results: Sequence[EvaluatorResult], value: Mapping[str, Any] | None) -> float:
    """One arm's score from its other graders' results."""
    options = value or {}
    weights: dict[str, float] = {}
    for name, weight in (options.get("weights") or {}).items():
        entry, _ = find_type(str(name))
        if entry is not None:
            weights[entry.name] = float(weight)
    total = weight_sum = 0.0
    for result in results:
        weight = weights.get(result.type, 1.0)
        total += (result.score or 0.0) * weight
        weight_sum += weight
    if options.get("method", "avg") == "sum":
        return total
    return total / weight_sum if weight_sum else 0.0


def selected(scores: Sequence[float], threshold: float | None) -> int | None:
    """The arm selected: the first with the highest score, unless it is below ``threshold``."""
    if not scores:
        return None
    best = max(range(len(scores)), key=lambda index: (scores[index], -index))
    if threshold is not None and scores[best] < threshold:
        return None
    return best
