"""Graders that call a target of their own kind, and which target each one uses.

``similar`` calls an embeddings target, ``moderation`` a moderation target, ``classifier`` a
classifier target: its own ``target``, else the first of that kind configured; why one cannot
run here is said the same way for all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult
from app.formatting.messages import ChatMessage
from app.providers.base import CallRole, ProviderRequest


def decided(
    config: EvaluatorConfig, passed: bool, line: str, score: float | None = None
) -> EvaluatorOutcome:
    """A pass or a fail said in one ``line``; ``score`` 1 or 0 unless given."""
    return EvaluatorOutcome(
        EvaluatorResult(
            name=config.name,
            type=config.type,
            score=score if score is not None else 1.0 if passed else 0.0,
            verdict="pass" if passed else "fail",
            passed=passed,
            hits=[line] if passed else [],
            misses=[] if passed else [line],
            reasoning=line,
            weight=config.weight,
        ),
        forces_fail=not passed,
    )


def text_request(text: str, case_id: str) -> ProviderRequest:
    """The call a target of these kinds answers: one text, as a judge call of the case."""
    return ProviderRequest(
        question=text,
        chat_prompt=(ChatMessage(role="user", content=text),),
        role=CallRole.JUDGE,
        case_id=case_id,
    )


@dataclass(frozen=True)
class TargetKind:
    """A kind of target some grader type calls (``api_format`` in the targets file)."""

    grader: str
    """The grader type that calls it."""
    kind: str
    """Its name in messages and its ``api_format``."""
    article: str
    docs: str
    """Where the docs describe such targets."""
    adding: str = ""
    """How a targets file declares one (default: ``with api_format: <kind>``)."""

    def target(self, config: EvaluatorConfig, known: Sequence[str]) -> str:
        """The target of this kind ``config`` uses, among the ``known`` ones."""
        listed = ", ".join(known) or "none is configured"
        if config.target is not None:
            if config.target not in known:
                raise EvaluatorConfigError(
                    f"evaluator {config.name!r} ({self.grader}): target {config.target!r} is "
                    f"not {self.article} {self.kind} target ({self.kind} targets: {listed})"
                )
            return config.target
        if known:
            return known[0]
        raise EvaluatorConfigError(
            f"evaluator {config.name!r} ({self.grader}) needs {self.article} {self.kind} "
            f"target and none is configured: add a target "
            f"{self.adding or f'with api_format: {self.kind}'} ({self.docs})"
        )

    def problems(self, configs: Iterable[EvaluatorConfig], known: Sequence[str]) -> list[str]:
        """Why each grader of this type in ``configs`` (composites' children too) cannot run.

        A grader naming a target that is not of this kind, or naming none when none of this
        kind is configured; one message per grader name.
        """
        problems: dict[str, str] = {}
        pending = list(configs)
        while pending:
            config = pending.pop(0)
            pending.extend(config.evaluators)
            if config.type != self.grader or config.name in problems:
                continue
            try:
                self.target(config, known)
            except EvaluatorConfigError as exc:
                problems[config.name] = str(exc)
        return list(problems.values())


EMBEDDINGS = TargetKind("similar", "embeddings", "an", "docs/providers.md, 'Embeddings targets'")
MODERATION = TargetKind("moderation", "moderation", "a", "docs/providers.md")
CLASSIFIER = TargetKind(
    "classifier",
    "classifier",
    "a",
    "docs/providers.md, 'Classifier targets'",
    "with provider: huggingface (task: text-classification)",
)
