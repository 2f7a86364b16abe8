"""The evaluator registry: canonical ``type`` -> implementation.

The only place that maps types to code; a catalog type (``app.evaluators.catalog``) is
runnable once registered here.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.errors import EvaluatorConfigError, ServiceError
from app.evaluators.base import (
    EvaluationContext,
    Evaluator,
    EvaluatorOutcome,
)
from app.evaluators.catalog import GRADER_TYPES, GraderType
from app.evaluators.composite import CompositeEvaluator
from app.evaluators.config import EvaluatorConfig
from app.evaluators.deterministic import (
    DeterministicEvaluator,
    check_contains,
    check_equals,
    check_is_json,
    check_regex,
)
from app.evaluators.llm_judge import LlmJudgeEvaluator
from app.evaluators.results import EvaluatorResult
from app.evaluators.rubrics import RubricEvaluator

_CANONICAL = frozenset(entry.name for entry in GRADER_TYPES)
GATE_OPTIONS = frozenset({"required", "min_score"})
"""Options every registered grader honours: ``run`` makes a failing required grader fail
the case."""


class EvaluatorRegistry:
    """Evaluators by type; ``run`` never raises for a configuration or judge-target problem."""

    def __init__(self) -> None:
        self._by_type: dict[str, Evaluator] = {}
        self._options: dict[str, frozenset[str]] = {}

    def register(self, type_name: str, evaluator: Evaluator, options: Iterable[str] = ()) -> None:
        """Make ``evaluator`` handle configurations of ``type_name`` (a catalog name).

        Args:
            type_name: The canonical type name.
            evaluator: The implementation.
            options: The type's own keys (as eval files write them) it honours, besides
                ``name``, ``type`` and ``weight``; a suite giving any other option of the
                type is refused until the implementation honours it.

        Raises:
            ValueError: ``type_name`` is not a canonical name of the catalog.
        """
        if type_name not in _CANONICAL:
            raise ValueError(f"{type_name!r} is not a grader type of the catalog")
        self._by_type[type_name] = evaluator
        self._options[type_name] = frozenset(options) | GATE_OPTIONS

    def runs(self, type_name: str) -> bool:
        """Whether an implementation of the canonical ``type_name`` is registered."""
        return type_name in self._by_type

    def honours(self, type_name: str) -> frozenset[str]:
        """The options of ``type_name`` its implementation honours (none if unregistered)."""
        return self._options.get(type_name, frozenset())

    @property
    def types(self) -> Iterable[str]:
        """The registered type names."""
        return tuple(self._by_type)

    async def run(self, config: EvaluatorConfig, context: EvaluationContext) -> EvaluatorOutcome:
        """Run the evaluator of ``config.type``; a broken configuration gives an ``error``."""
        evaluator = self._by_type.get(config.type)
        if evaluator is None:
            known = ", ".join(sorted(self._by_type))
            return error_outcome(config, f"unknown evaluator type {config.type!r} ({known})")
        try:
            outcome = await evaluator.evaluate(config, context)
        except (EvaluatorConfigError, ServiceError) as exc:
            return error_outcome(config, str(exc))
        return _gated(config, outcome, context.thresholds.pass_)


def _gated(
    config: EvaluatorConfig, outcome: EvaluatorOutcome, pass_mark: float
) -> EvaluatorOutcome:
    """A ``required`` grader under its floor fails the whole case.

    The floor is its ``min_score``, else the pass mark; the other graders' scores do not
    matter then.
    """
    score = outcome.result.score
    if not config.required or score is None or outcome.forces_fail:
        return outcome
    floor = config.min_score if config.min_score is not None else pass_mark
    if score >= floor:
        return outcome
    return EvaluatorOutcome(outcome.result, outcome.raw_request, forces_fail=True)


def error_outcome(config: EvaluatorConfig, message: str) -> EvaluatorOutcome:
    """The ``error`` result of an evaluator that could not run."""
    result = EvaluatorResult(
        name=config.name,
        type=config.type,
        score=None,
        verdict=None,
        reasoning=message,
        weight=config.weight,
        status="error",
    )
    return EvaluatorOutcome(result=result)


def build_registry() -> EvaluatorRegistry:
    """A registry holding every built-in evaluator type."""
    registry = EvaluatorRegistry()
    judge_options = ("prompt", "rubrics", "criteria", "value", "target")
    registry.register("llm_judge", LlmJudgeEvaluator(RubricEvaluator()), judge_options)
    registry.register("contains", DeterministicEvaluator(check_contains), ("value", "negate"))
    registry.register("contains_all", DeterministicEvaluator(check_contains), ("value", "negate"))
    registry.register("regex", DeterministicEvaluator(check_regex), ("value", "negate", "flags"))
    registry.register("equals", DeterministicEvaluator(check_equals), ("value", "negate"))
    registry.register("is_json", DeterministicEvaluator(check_is_json), ("schema", "negate"))
    composite_options = ("evaluators", "assertions", "assert", "aggregator")
    registry.register("composite", CompositeEvaluator(registry), composite_options)
    return registry


EVALUATORS = build_registry()
"""The built-in evaluators (stateless, shared by every run)."""

RUNNABLE_AGGREGATORS = frozenset({"weighted_average"})
"""Aggregators a ``composite`` runs today: ``weighted_average`` is the children's weighted
mean (its ``weights`` are the children's ``weight``)."""

EVALUATOR_TYPES: tuple[str, ...] = tuple(EVALUATORS.types)
"""The grader types that run today (canonical names)."""


def runnable_catalog() -> list[tuple[GraderType, bool]]:
    """Every catalog type with whether it runs today (for documentation and checks)."""
    return [(entry, EVALUATORS.runs(entry.name)) for entry in GRADER_TYPES]
