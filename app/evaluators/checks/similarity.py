"""Reference-based text metrics as graders: ``bleu``, ``gleu``, ``rouge_n``, ``levenshtein``.

The reference is ``value`` (``bleu`` and ``gleu`` take a list of references too), else the
case's reference answer. ``bleu``, ``gleu`` and ``rouge_n`` (``n``: 1..5, default 1; or
``variant: l``) score the metric itself and pass at ``threshold`` (promptfoo's defaults: 0.5,
0.5 and 0.75). ``levenshtein`` passes (score 1) when the edit distance is at most
``threshold`` (default 5). The metrics are ``text_metrics``'. ``negate`` (promptfoo's
``not-``) inverts the verdict: a negated metric passes below its pass mark, and its score is
``1 - score``.
"""

from __future__ import annotations

from collections.abc import Callable

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.checks import text_metrics
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult
from app.evaluators.verdicts import verdict_for

DEFAULT_PASS_MARKS = {"bleu": 0.5, "gleu": 0.5, "rouge_n": 0.75}
"""A metric's pass mark when the grader gives no ``threshold`` (promptfoo's)."""
DEFAULT_MAX_DISTANCE = 5.0


def references(config: EvaluatorConfig, context: EvaluationContext) -> list[str]:
    """The reference texts: ``value`` (a string or list of strings), else the reference answer."""
    value = config.value
    if isinstance(value, str) and value.strip():
        return [value]
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return list(value)
    if value is None and context.reference_answer.strip():
        return [context.reference_answer]
    raise EvaluatorConfigError(
        f"evaluator {config.name!r} ({config.type}): give 'value' (the reference text) or a "
        "case reference answer"
    )


def rouge_variant(config: EvaluatorConfig) -> str:
    """``rouge_1`` .. ``rouge_5`` from ``n`` (default 1), or ``rouge_l``."""
    extra = config.model_extra or {}
    n = extra.get("n", 1)
    if str(n).lower() == "l":
        return "rouge_l"
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 5:
        raise EvaluatorConfigError(f"evaluator {config.name!r} (rouge_n): 'n' is 1 to 5 or 'l'")
    return f"rouge_{n}"


def _bleu(config: EvaluatorConfig, answer: str, refs: list[str]) -> float:
    if config.semantics == "promptfoo":
        return text_metrics.promptfoo_bleu(answer, refs)
    return text_metrics.bleu(answer, refs)


def _gleu(_config: EvaluatorConfig, answer: str, refs: list[str]) -> float:
    return text_metrics.gleu(answer, refs)


def _rouge(config: EvaluatorConfig, answer: str, refs: list[str]) -> float:
    if config.semantics == "promptfoo":
        return max(text_metrics.promptfoo_rouge_1(answer, reference) for reference in refs)
    variant = rouge_variant(config)
    return max(text_metrics.rouge(answer, reference, variant) for reference in refs)


Metric = Callable[[EvaluatorConfig, str, list[str]], float]
SCORERS: dict[str, Metric] = {"bleu": _bleu, "gleu": _gleu, "rouge_n": _rouge}


class MetricEvaluator:
    """Scores the answer with one reference metric; the registry applies its pass mark."""

    def __init__(self, metric: Metric) -> None:
        self._metric = metric

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """The metric of the answer against the references, rounded to 4 places."""
        score = round(
            self._metric(config, context.candidate_answer, references(config, context)), 4
        )
        line = f"{config.type} {score:.4f}"
        return EvaluatorOutcome(
            EvaluatorResult(
                name=config.name,
                type=config.type,
                score=score,
                verdict=verdict_for(score, context.thresholds),
                reasoning=line,
                weight=config.weight,
                details={config.type: score},
            )
        )


class LevenshteinEvaluator:
    """Passes when the answer is within ``threshold`` edits of the reference."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Score 1 when the edit distance to the nearest reference is within the limit."""
        limit = config.threshold if config.threshold is not None else DEFAULT_MAX_DISTANCE
        exact = config.semantics == "promptfoo"
        answer = context.candidate_answer if exact else context.candidate_answer.strip()
        distance = min(
            text_metrics.levenshtein_distance(answer, reference if exact else reference.strip())
            for reference in references(config, context)
        )
        within = distance <= limit
        line = f"edit distance {distance} {'<=' if within else '>'} {limit:g}"
        held = within != config.negate
        score = 1.0 if held else 0.0
        return EvaluatorOutcome(
            EvaluatorResult(
                name=config.name,
                type=config.type,
                score=score,
                verdict=verdict_for(score, context.thresholds),
                hits=[line] if held else [],
                misses=[] if held else [line],
                reasoning=line,
                weight=config.weight,
                details={"distance": distance},
            )
        )
