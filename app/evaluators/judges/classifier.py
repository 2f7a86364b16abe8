"""``classifier``: a classifier target scores the answer in classes (promptfoo).

promptfoo's rules (measured against 0.123.1): the answer (an empty one too) goes to the
classifier target (the grader's ``target``: an assert's ``provider``, else the test's
``options.provider``, else the first classifier target configured); the score is the class
``value``'s score (0 when the reply has no such class) or, with no ``value``, the highest
score; it passes when the score is at least ``threshold`` (default 1, with a margin of one
machine epsilon). Negated (``not-classifier``), the pass flips and the score is 1 - score. A
target that fails is a grader error (no grade), negated or not: docs/design.md.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.judges.embedding_similarity import target_failed
from app.evaluators.judges.target_kinds import CLASSIFIER, decided, text_request
from app.providers.errors import ProviderError

DEFAULT_THRESHOLD = 1.0
"""promptfoo's threshold when an assert gives none: only a certain class passes."""


def classifier_problems(
    configs: Iterable[EvaluatorConfig], classifier_targets: Sequence[str]
) -> list[str]:
    """Why each ``classifier`` grader of ``configs`` (composites' children too) cannot run."""
    return CLASSIFIER.problems(configs, classifier_targets)


def classified_score(scores: dict[str, float], expected: str | None) -> float:
    """The score the grader judges (pure): the class ``expected``'s, else the highest."""
    if expected is None:
        return max(scores.values())
    return scores.get(expected, 0.0)


class ClassifierEvaluator:
    """Sends the answer to a classifier target and judges one class's score."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """A pass when the score reaches the threshold (flipped when negated)."""
        name = CLASSIFIER.target(config, context.classifier_targets)
        if context.resolve_judge is None:
            raise EvaluatorConfigError(f"evaluator {config.name!r}: no classifier target")
        request = text_request(context.candidate_answer, context.case.id)
        try:
            reply = await context.resolve_judge(name).complete(request)
        except ProviderError as exc:
            return target_failed(
                config, f"target {name!r} did not classify the answer: {exc.detail}"
            )
        if not reply.classification:
            return target_failed(config, f"target {name!r} returned no classification scores")
        expected = config.value if isinstance(config.value, str) else None
        score = classified_score(reply.classification, expected)
        threshold = DEFAULT_THRESHOLD if config.threshold is None else config.threshold
        passed = score >= threshold - sys.float_info.epsilon
        what = f"Classification {expected}" if expected is not None else "Maximum classification"
        line = f"{what} has score {score:.2f} {'>=' if passed else '<'} {threshold:g}"
        if config.negate:
            passed, score = not passed, 1.0 - score
            line = f"negated: {line}"
        return decided(config, passed, line, score)
