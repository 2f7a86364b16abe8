"""``string_check`` and ``text_similarity``: graders that compare two rendered texts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.evaluation.openai_graders.models import StringCheckGrader, TextSimilarityGrader
from app.evaluation.openai_graders.scope import GraderProblem, render_text
from app.evaluators.text_metrics import UNAVAILABLE_OFFLINE, MetricUnavailable, similarity

COSINE_REFUSAL = (
    "evaluation_metric 'cosine' needs an embedding model, and this service has no embedding "
    "targets; use fuzzy_match, bleu, gleu or rouge_*"
)


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
    """Why this service cannot compute the grader's metric, or None."""
    if grader.evaluation_metric == "cosine":
        return COSINE_REFUSAL
    reason = UNAVAILABLE_OFFLINE.get(grader.evaluation_metric)
    return f"evaluation_metric {grader.evaluation_metric!r}: {reason}" if reason else None


def text_similarity(grader: TextSimilarityGrader, scope: Mapping[str, Any]) -> Graded:
    """The metric's score; passes at ``pass_threshold`` (default 1: identical texts)."""
    refusal = similarity_refusal(grader)
    if refusal is not None:
        raise GraderProblem(refusal)
    text = render_text(grader.input, scope, f"{grader.name}.input")
    reference = render_text(grader.reference, scope, f"{grader.name}.reference")
    try:
        score = similarity(grader.evaluation_metric, text, reference)
    except (MetricUnavailable, ValueError) as exc:
        raise GraderProblem(f"{grader.name}: {exc}") from None
    threshold = 1.0 if grader.pass_threshold is None else grader.pass_threshold
    return Graded(score=score, passed=score >= threshold)
