"""promptfoo's ``select-best``: one grader that compares the answers of every arm of a test.

It cannot grade one answer alone: while the case runs it leaves a *pending* result, and once
every arm of the test has answered, one judge call over all the answers settles it for each
arm (``app.evaluation.select_best``).
"""

from __future__ import annotations

from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult

SELECT_BEST = "select_best"
PENDING = "pending"
"""``details.select_best`` of a result not settled yet (the other arms have not answered)."""


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
                details={SELECT_BEST: PENDING},
            )
        )


def is_pending(result: EvaluatorResult) -> bool:
    """Whether ``result`` is a select-best result still waiting for the comparison."""
    return result.type == SELECT_BEST and (result.details or {}).get(SELECT_BEST) == PENDING
