"""``string_check`` and ``text_similarity``: graders that compare two rendered texts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.errors import EvaluatorConfigError
from app.evaluation.openai_graders.models import StringCheckGrader, TextSimilarityGrader
from app.evaluation.openai_graders.scope import GraderProblem, render_text
from app.evaluators.base import JudgeClient
from app.evaluators.checks.text_metrics import UNAVAILABLE_OFFLINE, MetricUnavailable, similarity
from app.evaluators.judges.embedding_similarity import embed, vector_measure
from app.providers.errors import ProviderError

COSINE_MODEL = "text-embedding-3-large"
"""The model OpenAI's ``cosine`` embeds with: ``EVAL_OPENAI_MODELS`` may map it to a target."""


@dataclass(frozen=True)
class Graded:
    """One grader's outcome on one item: its score, pass/fail and what it sent a model."""

    score: float
    passed: bool
    reasoning: str | None = None
    sample: dict[str, Any] | None = None
    usage: dict[str, int] = field(default_factory=dict)


def string_check(grader: StringCheckGrader, scope: Mapping[str, Any]) -> Graded:
    """1 when the operation holds between the rendered input and reference, else 0."""
    text = render_text(grader.input, scope, f"{grader.name}.input")
    reference = render_text(grader.reference, scope, f"{grader.name}.reference")
    holds = {
        "eq": text == reference,
        "ne": text != reference,
        "like": reference in text,
        "ilike": reference.casefold() in text.casefold(),
    }[grader.operation]
    return Graded(score=1.0 if holds else 0.0, passed=holds)


def similarity_refusal(grader: TextSimilarityGrader) -> str | None:
    """Why this service cannot compute the grader's metric, or None.

    ``cosine`` is computed by an embeddings target (``cosine_similarity``).
    """
    reason = UNAVAILABLE_OFFLINE.get(grader.evaluation_metric)
    return f"evaluation_metric {grader.evaluation_metric!r}: {reason}" if reason else None


async def cosine_similarity(
    grader: TextSimilarityGrader, texts: tuple[str, str], embedder: JudgeClient, case_id: str
) -> Graded:
    """The cosine of the rendered input's and reference's embeddings (``embedder``'s)."""
    try:
        vectors = [await embed(embedder, text, case_id) for text in texts]
        score = vector_measure("cosine", *vectors)
    except ProviderError as exc:
        raise GraderProblem(f"{grader.name}: {exc.detail}", judge=True) from None
    except (EvaluatorConfigError, ValueError) as exc:
        raise GraderProblem(f"{grader.name}: {exc}") from None
    threshold = 1.0 if grader.pass_threshold is None else grader.pass_threshold
    return Graded(score=score, passed=score >= threshold)


def similarity_texts(grader: TextSimilarityGrader, scope: Mapping[str, Any]) -> tuple[str, str]:
    """The grader's input and reference, rendered."""
    return (
        render_text(grader.input, scope, f"{grader.name}.input"),
        render_text(grader.reference, scope, f"{grader.name}.reference"),
    )


def text_similarity(grader: TextSimilarityGrader, scope: Mapping[str, Any]) -> Graded:
    """The metric's score; passes at ``pass_threshold`` (default 1: identical texts)."""
    refusal = similarity_refusal(grader)
    if refusal is not None:
        raise GraderProblem(refusal)
    text, reference = similarity_texts(grader, scope)
    try:
        score = similarity(grader.evaluation_metric, text, reference)
    except (MetricUnavailable, ValueError) as exc:
        raise GraderProblem(f"{grader.name}: {exc}") from None
    threshold = 1.0 if grader.pass_threshold is None else grader.pass_threshold
    return Graded(score=score, passed=score >= threshold)
