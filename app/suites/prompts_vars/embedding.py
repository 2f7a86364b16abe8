"""The embeddings target of a test's ``similar`` graders: ``options.provider.embedding``.

promptfoo embeds with the grading provider's ``embedding`` (``defaultTest.options`` or a
test's own ``options``); an assert's own ``provider`` wins. A plain ``options.provider`` (a
string or ``{id}``) is the judge of model graders only (``defaults.options_judge``).
"""

from __future__ import annotations

from typing import Any

from app.evaluators.config import EvaluatorConfig
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.graders.lists import embedding_name


def options_embedding(options: Any, path: DocumentPath, findings: Findings) -> str | None:
    """The target ``options.provider.embedding`` names, if any (one naming none: an error)."""
    provider = options.get("provider") if isinstance(options, dict) else None
    if not isinstance(provider, dict) or "embedding" not in provider:
        return None
    name = embedding_name(provider)
    if name is None:
        findings.error(
            (*path, "provider", "embedding"),
            f"must name an embeddings target (a string or {{id}}), not "
            f"{describe(provider['embedding'])}",
        )
    return name


def embedded_by(
    graders: tuple[EvaluatorConfig, ...], target: str | None
) -> tuple[EvaluatorConfig, ...]:
    """``similar`` graders without a target of their own get ``target``."""
    if target is None:
        return graders
    return tuple(
        grader.model_copy(update={"target": target})
        if grader.type == "similar" and grader.target is None
        else grader
        for grader in graders
    )
