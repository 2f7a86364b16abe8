"""Combine several evaluator results into one grade (a case's, or a composite's)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from app.evaluators.base import EvaluatorOutcome
from app.evaluators.results import EvaluatorResult, Verdict
from app.evaluators.verdicts import Thresholds, verdict_for


@dataclass(frozen=True)
class Combined:
    """A weighted grade of several results.

    ``status`` is ``error`` if any result errored, else ``judge_error`` if any judge gave no
    grade (then ``score`` and ``verdict`` are ``None``), else ``ok``.
    """

    status: Literal["ok", "judge_error", "error"]
    score: float | None
    verdict: Verdict | None
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    reasoning: str | None = None
    forces_fail: bool = False
    error: str | None = None


def contribution(outcome: EvaluatorOutcome) -> float:
    """What a grader adds to a weighted mean: its score, or 1 when it passed its own mark.

    A grader with its own pass mark (``threshold``, a metric's default, a ``/v1``
    criterion's) that reached it counts as fully met, as in promptfoo; one that missed it
    fails the case anyway. A composite's aggregator mark is not such a mark: the composite
    adds its score (as AgentV scores it).
    """
    result = outcome.result
    if outcome.own_mark and result.passed:
        return 1.0
    return result.score or 0.0


def weighted_mean(outcomes: Sequence[EvaluatorOutcome]) -> float:
    """Mean of the contributions weighted by ``weight``; a plain mean when every weight is 0."""
    scores = [(contribution(outcome), outcome.result.weight) for outcome in outcomes]
    total = sum(weight for _, weight in scores)
    if total > 0:
        return sum(score * weight for score, weight in scores) / total
    return sum(score for score, _ in scores) / len(scores)


def joined_reasoning(results: Sequence[EvaluatorResult]) -> str | None:
    """``name: reasoning | name2: reasoning2`` over the results that give one."""
    parts = [f"{result.name}: {result.reasoning}" for result in results if result.reasoning]
    return " | ".join(parts) or None


def _failure(
    results: Sequence[EvaluatorResult],
) -> tuple[Literal["judge_error", "error"], str] | None:
    statuses: tuple[Literal["error"], Literal["judge_error"]] = ("error", "judge_error")
    for status in statuses:
        failed = [result for result in results if result.status == status]
        if failed:
            message = "; ".join(f"{result.name}: {result.reasoning}" for result in failed)
            return status, message
    return None


def combine(outcomes: Sequence[EvaluatorOutcome], thresholds: Thresholds) -> Combined:
    """The weighted grade of ``outcomes``; an unmet required rubric anywhere forces ``fail``.

    A ``required`` grader under its mark makes the score 0 (AgentV's gate), not the mean.
    """
    results = [outcome.result for outcome in outcomes]
    hits = [hit for result in results for hit in result.hits]
    misses = [miss for result in results for miss in result.misses]
    reasoning = joined_reasoning(results)
    forces_fail = any(outcome.forces_fail for outcome in outcomes)
    failure = _failure(results)
    if failure is not None:
        status, message = failure
        return Combined(status, None, None, hits, misses, reasoning, forces_fail, message)
    if not results:
        return Combined("error", None, None, error="no evaluator ran")
    score = 0.0 if any(outcome.gate_failed for outcome in outcomes) else weighted_mean(outcomes)
    verdict: Verdict = "fail" if forces_fail else verdict_for(score, thresholds)
    if thresholds.rule == "all_pass":
        failed = any(result.passed is False and result.weight > 0 for result in results)
        verdict = "fail" if failed else "pass"
    elif thresholds.rule == "mean":
        verdict = "pass" if score >= thresholds.pass_ else "fail"
    return Combined("ok", score, verdict, hits, misses, reasoning, forces_fail)
