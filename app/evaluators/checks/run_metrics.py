"""Graders of the candidate call's own figures: latency, cost, usage and finish reason.

They read what the record already holds (``EvaluationContext.candidate``): the call's time
(retries included), its tokens, and what the target reports (cost, tool calls, model calls,
its own duration). ``latency`` passes when the call took at most ``threshold`` ms; ``cost``
when it cost at most ``threshold`` (or ``budget``) USD. ``execution_metrics`` checks every
limit it is given (``max_tool_calls``, ``max_llm_calls``, ``max_tokens``,
``max_input_tokens``, ``max_output_tokens``, ``max_cost_usd``, ``max_duration_ms``,
``target_exploration_ratio`` within ``exploration_tolerance``, default 0.2; AgentV's
``token-usage`` spells the token limits ``max_total``, ``max_input``, ``max_output``) and
scores the share met; a figure the target did not report is a miss that says so.

``finish-reason`` (promptfoo) passes when its ``value`` (text) equals the reason the target
recorded, in the normalised words of ``app.providers.finish_reasons`` (``stop``, ``length``,
``tool_calls``...), ignoring case; the value itself is not normalised, so ``end_turn`` never
matches (promptfoo 0.123.1 measured). A target that reports no reason fails it, saying so;
``not-finish-reason`` inverts both.
"""

from __future__ import annotations

from typing import Any

from app.errors import EvaluatorConfigError
from app.evaluators.base import CandidateRun, EvaluationContext, EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult
from app.evaluators.verdicts import verdict_for

EXPLORATION_WORDS = ("read", "search", "grep", "glob", "list", "find", "view", "fetch", "ls", "cat")
"""A tool whose name contains one of these words (any case) explores rather than acts."""
LIMIT_KEYS = (
    "max_tool_calls",
    "max_llm_calls",
    "max_tokens",
    "max_input_tokens",
    "max_output_tokens",
    "max_cost_usd",
    "max_duration_ms",
)
LIMIT_ALIASES = {
    "max_total": "max_tokens",
    "max_input": "max_input_tokens",
    "max_output": "max_output_tokens",
}
"""AgentV's ``token-usage`` spellings of the token limits."""


def exploration_ratio(run: CandidateRun) -> float | None:
    """The share of tool calls that explore (read, search...); None without tool calls."""
    if not run.tool_calls:
        return None
    exploring = sum(
        any(word in call.tool.lower() for word in EXPLORATION_WORDS) for call in run.tool_calls
    )
    return exploring / len(run.tool_calls)


def figures(run: CandidateRun) -> dict[str, float | None]:
    """Each limit's figure for this call (None when the target did not report it)."""
    return {
        "max_tool_calls": float(len(run.tool_calls)),
        "max_llm_calls": None if run.llm_calls is None else float(run.llm_calls),
        "max_tokens": float(run.input_tokens + run.output_tokens),
        "max_input_tokens": float(run.input_tokens),
        "max_output_tokens": float(run.output_tokens),
        "max_cost_usd": run.cost_usd,
        "max_duration_ms": run.duration_ms if run.duration_ms is not None else run.latency_ms,
        "latency_ms": run.latency_ms,
    }


def _limit(config: EvaluatorConfig, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise EvaluatorConfigError(f"evaluator {config.name!r}: {key!r} must be a number >= 0")
    return float(value)


def _result(
    config: EvaluatorConfig,
    context: EvaluationContext,
    hits: list[str],
    misses: list[str],
    details: dict[str, Any],
) -> EvaluatorOutcome:
    checks = len(hits) + len(misses)
    score = len(hits) / checks if checks else 0.0
    return EvaluatorOutcome(
        EvaluatorResult(
            name=config.name,
            type=config.type,
            score=score,
            verdict=verdict_for(score, context.thresholds),
            hits=hits,
            misses=misses,
            reasoning="; ".join(hits + misses),
            weight=config.weight,
            details=details,
        )
    )


def _check(
    name: str, figure: float | None, limit: float, hits: list[str], misses: list[str]
) -> None:
    if figure is None:
        misses.append(f"{name}: not reported by the target")
    elif figure <= limit:
        hits.append(f"{name} {figure:g} <= {limit:g}")
    else:
        misses.append(f"{name} {figure:g} > {limit:g}")


class SingleMetricEvaluator:
    """``latency`` (ms) or ``cost`` (USD): the call's figure at most ``threshold``."""

    def __init__(self, key: str, label: str) -> None:
        self._key = key
        self._label = label

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Pass (1) when the figure is within the limit, else fail (0)."""
        raw = (
            config.threshold
            if config.threshold is not None
            else (config.model_extra or {}).get("budget")
        )
        if raw is None:
            raise EvaluatorConfigError(
                f"evaluator {config.name!r} ({config.type}): give 'threshold'"
            )
        limit = _limit(config, "threshold", raw)
        figure = figures(context.candidate)[self._key]
        hits: list[str] = []
        misses: list[str] = []
        _check(self._label, figure, limit, hits, misses)
        return _result(config, context, hits, misses, {self._label: figure, "limit": limit})


class ExecutionMetricsEvaluator:
    """Checks each limit given; the score is the share of limits met."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Compare every configured limit with the call's figures."""
        extra = dict(config.model_extra or {})
        for alias, key in LIMIT_ALIASES.items():
            if extra.get(alias) is not None and extra.get(key) is None:
                extra[key] = extra[alias]
        run = context.candidate
        actual = figures(run)
        hits: list[str] = []
        misses: list[str] = []
        for key in LIMIT_KEYS:
            if extra.get(key) is not None:
                _check(
                    key.removeprefix("max_"),
                    actual[key],
                    _limit(config, key, extra[key]),
                    hits,
                    misses,
                )
        target = extra.get("target_exploration_ratio")
        ratio = exploration_ratio(run)
        if target is not None:
            tolerance = _limit(
                config, "exploration_tolerance", extra.get("exploration_tolerance", 0.2)
            )
            wanted = _limit(config, "target_exploration_ratio", target)
            if ratio is None:
                misses.append("exploration ratio: the target reported no tool calls")
            elif abs(ratio - wanted) <= tolerance:
                hits.append(f"exploration ratio {ratio:.2f} within {tolerance:g} of {wanted:g}")
            else:
                misses.append(
                    f"exploration ratio {ratio:.2f} not within {tolerance:g} of {wanted:g}"
                )
        if not hits and not misses:
            raise EvaluatorConfigError(f"evaluator {config.name!r}: give at least one limit")
        details = {
            key.removeprefix("max_"): value for key, value in actual.items() if key in LIMIT_KEYS
        }
        return _result(config, context, hits, misses, {**details, "exploration_ratio": ratio})


class FinishReasonEvaluator:
    """Pass (1) when the candidate's finish reason is ``value``, else fail (0)."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Compare the recorded finish reason with ``value``."""
        expected = config.value
        if not isinstance(expected, str) or not expected.strip():
            raise EvaluatorConfigError(
                f"evaluator {config.name!r} ({config.type}): 'value' is the expected finish "
                "reason (text: stop, length, tool_calls, content_filter...)"
            )
        actual = context.candidate.finish_reason
        if actual is None:
            hits, misses = [], ["the target reported no finish reason"]
        elif expected.lower() == actual.lower():
            hits, misses = [f"finish reason {actual!r}"], []
        else:
            hits, misses = [], [f"finish reason {actual!r}, expected {expected!r}"]
        details = {"finish_reason": actual, "expected": expected}
        return _result(config, context, hits, misses, details)
