"""promptfoo's ``select-best`` and ``max-score``: graders that compare the arms of a test.

Neither can grade one answer alone: while the case runs each leaves a *pending* result, and
once every arm of the test has answered it is settled for each arm
(``app.evaluation.select_best``): ``select-best`` by one judge call over all the answers,
``max-score`` from the scores the arms' other graders gave.
"""

from __future__ import annotations

from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult

SELECT_BEST = "select_best"
MAX_SCORE = "max_score"
COMPARED = frozenset({SELECT_BEST, MAX_SCORE})
"""Grader types that compare the answers of a test's arms."""
PENDING = "pending"
"""``details[<type>]`` of a result not settled yet (the other arms have not answered)."""


class SelectBestEvaluator:
    """Leaves a pending result: the comparison runs once every arm has answered."""

    async def evaluate(
        self,
        config: EvaluatorConfig,
        context: EvaluationContext,  # noqa: ARG002 (the other arms' answers are not here)
    ) -> EvaluatorOutcome:
        """A result with no score yet, marked pending."""
        return EvaluatorOutcome(
            result=EvaluatorResult(
                name=config.name,
                type=config.type,
                score=None,
                verdict=None,
                weight=config.weight,
                reasoning="compared with the other arms' answers once every arm has answered",
                details={config.type: PENDING},
            )
        )


def is_pending(result: EvaluatorResult) -> bool:
    """Whether ``result`` compares the arms and still waits for the comparison."""
    return result.type in COMPARED and (result.details or {}).get(result.type) == PENDING
