"""``similar``: the answer's embedding against the value's, on an embeddings target (promptfoo).

The measure is the type's suffix: ``similar`` and ``similar:cosine`` (cosine similarity),
``similar:dot`` (dot product), ``similar:euclidean`` (distance); the reader keeps it as
``measure``. With promptfoo's rules: ``threshold`` (default 0.75) is the least similarity,
or for ``euclidean`` the greatest distance; the score is the similarity (``1 / (1 + d)`` for
a distance); ``not-similar`` passes where ``similar`` fails and scores ``1 - score``. A list
``value`` passes when any value passes (score: the best), a negated one when every value
does (score: the lowest). Each text is embedded by the grader's ``target`` (an assert's
``provider``, a test's ``options.provider.embedding``), else by the first embeddings target
configured (promptfoo's default embedding provider stands for it); none is an error naming
the grader.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext, EvaluatorOutcome, JudgeClient
from app.evaluators.checks.similarity import references
from app.evaluators.config import EvaluatorConfig
from app.evaluators.judges.target_kinds import EMBEDDINGS, text_request
from app.evaluators.results import EvaluatorResult
from app.providers.errors import ProviderError

DEFAULT_THRESHOLD = 0.75
MEASURES = ("cosine", "dot", "euclidean")
_EPSILON = sys.float_info.epsilon


@dataclass(frozen=True)
class Compared:
    """One value compared with the answer: the raw measure, the score and the verdict."""

    measure: float
    score: float
    passed: bool
    line: str


def measure_of(config: EvaluatorConfig) -> str:
    """The grader's measure (``cosine`` unless the reader kept another)."""
    measure = (config.model_extra or {}).get("measure") or "cosine"
    if measure not in MEASURES:
        raise EvaluatorConfigError(
            f"evaluator {config.name!r} (similar): unknown measure {measure!r} "
            f"({', '.join(MEASURES)})"
        )
    return str(measure)


class _HasEmbeddingTargets(Protocol):
    @property
    def embedding_targets(self) -> tuple[str, ...]:
        """The configured embeddings targets."""
        ...


def embeddings_target(config: EvaluatorConfig, context: _HasEmbeddingTargets) -> str:
    """The embeddings target that embeds the grader's texts (see the module docstring)."""
    return EMBEDDINGS.target(config, context.embedding_targets)


def embedding_problems(
    configs: Iterable[EvaluatorConfig], embedding_targets: Sequence[str]
) -> list[str]:
    """Why each ``similar`` grader of ``configs`` (composites' children too) cannot embed here."""
    return EMBEDDINGS.problems(configs, embedding_targets)


def vector_measure(measure: str, answer: Sequence[float], value: Sequence[float]) -> float:
    """Cosine similarity, dot product or euclidean distance of two vectors of one length."""
    if len(answer) != len(value):
        raise ValueError(f"vectors of different lengths ({len(answer)} and {len(value)})")
    if measure == "euclidean":
        return math.sqrt(sum((a - b) ** 2 for a, b in zip(answer, value, strict=True)))
    dot = sum(a * b for a, b in zip(answer, value, strict=True))
    if measure == "dot":
        return dot
    lengths = math.sqrt(sum(a * a for a in answer)) * math.sqrt(sum(b * b for b in value))
    return dot / lengths if lengths else 0.0


def compared(measure: str, found: float, threshold: float, negate: bool) -> Compared:
    """The verdict and score of one measure against ``threshold`` (promptfoo's rules)."""
    if measure == "euclidean":
        close = found <= threshold + _EPSILON
        far = found >= threshold - _EPSILON
        similarity = 1 / (1 + found)
        passed = far if negate else close
        line = f"distance {found:.4f} {'<=' if close else '>'} {threshold:g}"
    else:
        similarity = found
        close = found >= threshold - _EPSILON
        passed = found <= threshold + _EPSILON if negate else close
        line = f"similarity {found:.4f} {'>=' if close else '<'} {threshold:g}"
    return Compared(found, 1 - similarity if negate else similarity, passed, line)


def pick(results: Sequence[Compared], negate: bool) -> Compared:
    """A list value's outcome: any passing (else the best), negated: every (else the first)."""
    if negate:
        failed = [result for result in results if not result.passed]
        return failed[0] if failed else min(results, key=lambda result: result.score)
    passing = [result for result in results if result.passed]
    return passing[0] if passing else max(results, key=lambda result: result.score)


async def embed(client: JudgeClient, text: str, case_id: str) -> tuple[float, ...]:
    """The vector ``client`` (an embeddings target) gives ``text``."""
    reply = await client.complete(text_request(text, case_id))
    if not reply.embedding:
        raise EvaluatorConfigError(f"target {client.name!r} answered without an embedding")
    return reply.embedding


async def _compare(
    config: EvaluatorConfig,
    context: EvaluationContext,
    client: JudgeClient,
    measure: str,
    values: Sequence[str],
    threshold: float,
) -> list[Compared]:
    """The answer compared with each value (its vector fetched once)."""
    case_id = context.case.id
    answer = await embed(client, context.candidate_answer, case_id)
    results: list[Compared] = []
    for value in values:
        try:
            found = vector_measure(measure, answer, await embed(client, value, case_id))
        except ValueError as exc:
            raise EvaluatorConfigError(f"evaluator {config.name!r}: {exc}") from None
        results.append(compared(measure, found, threshold, config.negate))
    return results


def target_failed(config: EvaluatorConfig, reasoning: str) -> EvaluatorOutcome:
    """No grade: the target a grader calls (embeddings, moderation) failed, as a judge's."""
    return EvaluatorOutcome(
        EvaluatorResult(
            name=config.name,
            type=config.type,
            score=None,
            verdict=None,
            reasoning=reasoning,
            weight=config.weight,
            status="judge_error",
        )
    )


class SimilarEvaluator:
    """Embeds the answer and each value, then compares them (see the module docstring)."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """The comparison's score and verdict; the case fails when it does not pass."""
        measure = measure_of(config)
        values = references(config, context)
        name = embeddings_target(config, context)
        if context.resolve_judge is None:
            raise EvaluatorConfigError(f"evaluator {config.name!r}: no targets to embed with")
        client = context.resolve_judge(name)
        threshold = DEFAULT_THRESHOLD if config.threshold is None else config.threshold
        try:
            results = await _compare(config, context, client, measure, values, threshold)
        except ProviderError as exc:  # the embeddings target failed: no grade, as a judge's
            return target_failed(config, f"target {name!r} gave no embedding: {exc.detail}")
        chosen = pick(results, config.negate)
        score = round(min(1.0, max(0.0, chosen.score)), 6)  # a dot product may leave 0..1
        return EvaluatorOutcome(
            EvaluatorResult(
                name=config.name,
                type=config.type,
                score=score,
                verdict="pass" if chosen.passed else "fail",
                passed=chosen.passed,
                hits=[chosen.line] if chosen.passed else [],
                misses=[] if chosen.passed else [chosen.line],
                reasoning=chosen.line,
                weight=config.weight,
                details={"measure": measure, measure: round(chosen.measure, 6)},
            ),
            forces_fail=not chosen.passed,
        )
