"""``finish-reason``: why the candidate's model stopped, as promptfoo grades it.

The target records the reason in the normalised vocabulary (``app.providers.finish_reasons``:
``stop``, ``length``, ``tool_calls``, ``content_filter``...). The grader passes when its
``value`` (text) equals that reason, ignoring case; the value itself is not normalised, so
``end_turn`` never matches (promptfoo 0.123.1 measured). A target that reports no reason fails
it, saying so; ``not-finish-reason`` inverts both.
"""

from __future__ import annotations

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult
from app.evaluators.verdicts import verdict_for


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
            line = "the target reported no finish reason"
            passed = False
        else:
            passed = expected.lower() == actual.lower()
            line = f"finish reason {actual!r}" + ("" if passed else f", expected {expected!r}")
        score = 1.0 if passed else 0.0
        return EvaluatorOutcome(
            EvaluatorResult(
                name=config.name,
                type=config.type,
                score=score,
                verdict=verdict_for(score, context.thresholds),
                hits=[line] if passed else [],
                misses=[] if passed else [line],
                reasoning=line,
                weight=config.weight,
                details={"finish_reason": actual, "expected": expected},
            )
        )
