"""promptfoo's ``assertScoringFunction``: a program makes a test's result from its asserts'.

A test (or ``defaultTest``) naming ``file://x.js[:name]`` or ``file://x.py[:name]`` has its
result made by that function once its asserts are graded, as promptfoo 0.123.1 does
(measured): it is called with ``(namedScores, context)``, ``namedScores`` mapping each
assert ``metric`` to the weighted mean of the scores of the asserts naming it, ``context``
holding ``componentResults`` (each assert's ``{pass, score, reason, assertion}``, the
assertion as written: ``type``, ``value``, ``metric``, ``weight``) and ``tokensUsed``. The
function's default name is ``func`` in both languages (a JavaScript module's default
export too); it may be async. It must return a grading result, ``{pass, score, reason}``
with a boolean ``pass`` and a number ``score``: that is the test's verdict and score.
Anything else (a number, a boolean, a result without ``pass`` or ``score``), a throw, or a
program that could not run fails the test with ``Scoring function error: ...`` and score
0, as promptfoo reports it. A test with no asserts, or whose asserts could not all grade,
is not given to the function. The program runs in the sandbox like a ``python`` assert's
file (``program_asserts``), only with code graders enabled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.evaluators.aggregate import Combined
from app.evaluators.base import EvaluatorOutcome
from app.evaluators.code.code_judge import DISABLED, NOT_FROM_ROOT
from app.evaluators.code.program_asserts import (
    PYTHON,
    call_function,
    file_reference,
    language_of,
)
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.config import EvaluatorConfig

DEFAULT_FUNCTION = "func"
"""The function promptfoo calls when the reference names none (both languages, measured)."""
NOT_A_RESULT = "assertion scoring function must return a GradingResult"


def metric_of(config: EvaluatorConfig | None) -> str | None:
    """The ``metric`` an assert names (promptfoo's named score), or None."""
    return config.metric if config is not None else None


def named_scores(
    outcomes: Sequence[EvaluatorOutcome], graders: Mapping[str, EvaluatorConfig]
) -> dict[str, float]:
    """Each metric's weighted mean score over the asserts naming it (0 when all weigh 0)."""
    sums: dict[str, tuple[float, float]] = {}
    for outcome in outcomes:
        result = outcome.result
        metric = metric_of(graders.get(result.name))
        if metric is None:
            continue
        total, weights = sums.get(metric, (0.0, 0.0))
        sums[metric] = (total + (result.score or 0.0) * result.weight, weights + result.weight)
    return {name: total / weights if weights else 0.0 for name, (total, weights) in sums.items()}


def _component(outcome: EvaluatorOutcome, config: EvaluatorConfig | None) -> dict[str, Any]:
    result = outcome.result
    assertion: dict[str, Any] = {"type": result.type}
    if config is not None and config.value is not None:
        assertion["value"] = config.value
    if (metric := metric_of(config)) is not None:
        assertion["metric"] = metric
    if result.weight != 1:
        assertion["weight"] = result.weight
    return {
        "pass": bool(result.passed),
        "score": result.score or 0.0,
        "reason": result.reasoning or "",
        "assertion": assertion,
    }


def scoring_context(
    outcomes: Sequence[EvaluatorOutcome], graders: Mapping[str, EvaluatorConfig]
) -> dict[str, Any]:
    """The function's ``context``: the asserts' results as promptfoo gives them."""
    return {
        "componentResults": [
            _component(outcome, graders.get(outcome.result.name)) for outcome in outcomes
        ],
        "tokensUsed": {"total": 0, "prompt": 0, "completion": 0, "cached": 0, "numRequests": 0},
    }


def _failed(combined: Combined, why: str) -> Combined:
    reason = f"Scoring function error: {why}"
    return Combined("ok", 0.0, "fail", combined.hits, combined.misses, reason)


async def scored_by_function(
    function: EvaluatorConfig,
    outcomes: Sequence[EvaluatorOutcome],
    graders: Sequence[EvaluatorConfig],
    combined: Combined,
    programs: ProgramRunner | None,
) -> Combined:
    """The test's grade as ``function`` makes it from ``outcomes`` (see the module)."""
    if combined.status != "ok" or not outcomes:
        return combined
    reference = file_reference(str(function.value))
    if reference is None:  # the reader accepts only file references
        return _failed(combined, f"{function.value!r} is not a file://")
    if programs is None or function.cwd is None:
        return _failed(combined, DISABLED if programs is None else NOT_FROM_ROOT)
    file, name = reference
    by_name = {grader.name: grader for grader in graders}
    arguments = (named_scores(outcomes, by_name), scoring_context(outcomes, by_name))
    language = language_of(file)
    if language is PYTHON:
        name = name or DEFAULT_FUNCTION
    folder = Path(function.cwd)
    returned = await call_function(
        programs, folder, language, (file, name), arguments, fallback=DEFAULT_FUNCTION
    )
    if isinstance(returned, dict) and "__threw" in returned:
        return _failed(combined, str(returned["__threw"]))
    passed = returned.get("pass") if isinstance(returned, dict) else None
    score = returned.get("score") if isinstance(returned, dict) else None
    numeric = isinstance(score, int | float) and not isinstance(score, bool)
    if not isinstance(passed, bool) or not numeric:
        return _failed(combined, NOT_A_RESULT)
    reason = returned.get("reason")
    return Combined(
        "ok",
        float(score),  # type: ignore[arg-type]
        "pass" if passed else "fail",
        combined.hits,
        combined.misses,
        reason if isinstance(reason, str) and reason else combined.reasoning,
    )
