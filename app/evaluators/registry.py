"""The evaluator registry: canonical ``type`` -> implementation.

The only place that maps types to code; a catalog type (``app.evaluators.catalog``) is
runnable once registered here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Literal

from app.errors import EvaluatorConfigError, ServiceError
from app.evaluators.base import (
    EvaluationContext,
    Evaluator,
    EvaluatorOutcome,
)
from app.evaluators.catalog import GRADER_TYPES, GraderType
from app.evaluators.checks.deterministic import (
    CheckOutcome,
    DeterministicEvaluator,
    RegexEvaluator,
    check_contains,
    check_contains_any,
    check_ends_with,
    check_equals,
    check_icontains,
    check_icontains_any,
    check_starts_with,
    check_word_count,
)
from app.evaluators.checks.field_accuracy import FieldAccuracyEvaluator
from app.evaluators.checks.json_checks import (
    check_contains_json,
    check_is_json,
    check_typeof,
    plain_json_check,
)
from app.evaluators.checks.run_metrics import (
    LIMIT_ALIASES,
    ExecutionMetricsEvaluator,
    FinishReasonEvaluator,
    SingleMetricEvaluator,
)
from app.evaluators.checks.similarity import (
    DEFAULT_PASS_MARKS,
    SCORERS,
    LevenshteinEvaluator,
    MetricEvaluator,
)
from app.evaluators.checks.xml_checks import check_contains_xml, check_is_xml
from app.evaluators.code.code_judge import CodeJudgeEvaluator
from app.evaluators.code.javascript import JavascriptEvaluator
from app.evaluators.code.program_asserts import ProgramAssertEvaluator
from app.evaluators.code.transforms import transformed
from app.evaluators.composite import CompositeEvaluator
from app.evaluators.config import EvaluatorConfig
from app.evaluators.judges.classifier import ClassifierEvaluator
from app.evaluators.judges.embedding_similarity import SimilarEvaluator
from app.evaluators.judges.llm_judge import LlmJudgeEvaluator
from app.evaluators.judges.model_graded import KINDS as MODEL_GRADED
from app.evaluators.judges.model_graded import SCORED as SCORED_MODEL_GRADED
from app.evaluators.judges.model_graded import ModelGradedEvaluator, pass_mark
from app.evaluators.judges.moderation import ModerationEvaluator
from app.evaluators.judges.rubrics import RubricEvaluator
from app.evaluators.judges.select_best import SelectBestEvaluator
from app.evaluators.results import EvaluatorResult
from app.evaluators.tool_calls.tool_asserts import GRADERS as TOOL_CALL_GRADERS
from app.evaluators.tool_calls.tool_asserts import ToolCallsEvaluator
from app.evaluators.tool_calls.trajectory import SkillTriggerEvaluator, ToolTrajectoryEvaluator
from app.evaluators.verdicts import verdict_for

_CANONICAL = frozenset(entry.name for entry in GRADER_TYPES)
GATE_OPTIONS = frozenset({"required", "min_score"})
"""Options every registered grader honours: ``run`` makes a failing required grader fail
the case."""
NEGATED_BY_MARK = frozenset({"bleu", "gleu", "rouge_n", *SCORED_MODEL_GRADED})
"""Metrics (and scored model graders) whose ``negate`` the registry applies: they pass below
their mark, scored 1 - s."""
ThresholdUse = Literal["pass_mark", "limit"]
"""What a grader's ``threshold`` means: its pass mark, or a limit the evaluator checks itself
(``latency`` ms, ``cost`` USD, ``levenshtein`` edits)."""


class EvaluatorRegistry:
    """Evaluators by type; ``run`` never raises for a configuration or judge-target problem."""

    def __init__(self) -> None:
        self._by_type: dict[str, Evaluator] = {}
        self._options: dict[str, frozenset[str]] = {}
        self._threshold: dict[str, ThresholdUse] = {}
        self._default_marks: dict[str, float] = {}
        self._negated_here: set[str] = set()

    def register(
        self,
        type_name: str,
        evaluator: Evaluator,
        options: Iterable[str] = (),
        *,
        threshold: ThresholdUse = "pass_mark",
        default_pass_mark: float | None = None,
    ) -> None:
        """Make ``evaluator`` handle configurations of ``type_name`` (a catalog name).

        Args:
            type_name: The canonical type name.
            evaluator: The implementation.
            options: The type's own keys (as eval files write them) it honours, besides
                ``name``, ``type``, ``weight``, ``threshold`` and ``negate`` (the registry
                inverts the result of a type that does not list it itself); a suite giving
                any other option of the type is refused until the implementation honours it.
            threshold: What the grader's ``threshold`` means (its pass mark, or a limit).
            default_pass_mark: The type's own pass mark when the grader gives none (else the
                case's pass threshold applies).

        Raises:
            ValueError: ``type_name`` is not a canonical name of the catalog.
        """
        if type_name not in _CANONICAL:
            raise ValueError(f"{type_name!r} is not a grader type of the catalog")
        self._by_type[type_name] = evaluator
        if "negate" not in options:
            self._negated_here.add(type_name)
        self._options[type_name] = frozenset(options) | GATE_OPTIONS | {"threshold", "negate"}
        self._threshold[type_name] = threshold
        if default_pass_mark is not None:
            self._default_marks[type_name] = default_pass_mark

    def runs(self, type_name: str) -> bool:
        """Whether an implementation of the canonical ``type_name`` is registered."""
        return type_name in self._by_type

    def honours(self, type_name: str) -> frozenset[str]:
        """The options of ``type_name`` its implementation honours (none if unregistered)."""
        return self._options.get(type_name, frozenset())

    def default_pass_mark(self, type_name: str) -> float | None:
        """The type's own pass mark when a grader gives no ``threshold`` (None: the case's)."""
        return self._default_marks.get(type_name)

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
            if config.transforms:
                context = await transformed(config, context)
            outcome = await evaluator.evaluate(config, context)
        except (EvaluatorConfigError, ServiceError) as exc:
            return error_outcome(config, str(exc))
        if config.negate and config.type in self._negated_here:
            outcome = negated(outcome, context)
        return self._judged(config, outcome, context.thresholds.pass_)

    def _judged(
        self, config: EvaluatorConfig, outcome: EvaluatorOutcome, case_mark: float
    ) -> EvaluatorOutcome:
        """The outcome with ``passed`` set, judged by the grader's pass mark, and gated.

        The pass mark is the grader's ``threshold`` (unless it is a limit), else the
        evaluator's own for this result, else the type's default; a grader with such a mark
        gets a pass/fail verdict by it, and failing it fails the case. Without one the case's
        pass threshold decides. A ``required`` grader under its ``min_score`` (default: its
        pass mark) fails the case too and makes its score 0, as AgentV scores it.
        """
        result = outcome.result
        if result.status != "ok" or result.score is None:
            return outcome
        own = config.threshold if self._threshold.get(config.type) == "pass_mark" else None
        own_mark = own is not None or self._default_marks.get(config.type) is not None
        for fallback in (outcome.pass_mark, self._default_marks.get(config.type)):
            own = fallback if own is None else own
        if config.semantics == "promptfoo" and config.weight == 0:
            return replace(outcome, result=result.model_copy(update={"passed": True}))
        if own is None:
            passed = result.verdict == "pass"
            update: dict[str, object] = {"passed": passed}
        else:
            negated = config.negate and config.type in NEGATED_BY_MARK
            passed = (result.score >= own) != negated and not outcome.forces_fail
            update = {"passed": passed, "verdict": "pass" if passed else "fail"}
            if negated:
                update["score"] = round(1.0 - result.score, 4)
        forces = outcome.forces_fail or (own is not None and not passed)
        gate_failed = False
        if config.required:
            floor = config.min_score if config.min_score is not None else own or case_mark
            gate_failed = result.score < floor
        return replace(
            outcome,
            result=result.model_copy(update=update),
            forces_fail=forces or gate_failed,
            own_mark=own_mark,  # an aggregator's mark (outcome.pass_mark) judges, adds score
            gate_failed=gate_failed,
        )


def negated(outcome: EvaluatorOutcome, context: EvaluationContext) -> EvaluatorOutcome:
    """``negate: true``: the score inverted (1 - score), hits and misses swapped.

    A result without a score (an error, a judge that gave none) stays as it is.
    """
    result = outcome.result
    if result.status != "ok" or result.score is None:
        return outcome
    score = 1.0 - result.score
    inverted = result.model_copy(
        update={
            "score": score,
            "verdict": verdict_for(score, context.thresholds),
            "hits": result.misses,
            "misses": result.hits,
            "reasoning": f"negated: {result.reasoning}" if result.reasoning else "negated",
        }
    )
    return replace(outcome, result=inverted, forces_fail=False)


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


def check_is_sql(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """``is_sql`` (``checks.sql_checks``), imported at its first use.

    sqlglot took 0.1 s of every start of the service and of every process it starts.
    """
    from app.evaluators.checks.sql_checks import check_is_sql as check

    return check(config, answer)


def build_registry() -> EvaluatorRegistry:
    """A registry holding every built-in evaluator type."""
    registry = EvaluatorRegistry()
    # A judge here takes one step, so it is always within a ``max_steps`` limit.
    judge_options = (
        *("prompt", "rubrics", "criteria", "value", "target", "provider"),
        *("temperature", "judge_options", "max_steps", "preprocessors"),
    )
    judge = LlmJudgeEvaluator(RubricEvaluator())
    registry.register("llm_judge", judge, judge_options)
    model_graded = ModelGradedEvaluator(judge)
    for name in MODEL_GRADED:
        registry.register(
            name,
            model_graded,
            ("value", "target", "provider", "test_vars", "contextTransform", "judge_options")
            + (("negate",) if name in SCORED_MODEL_GRADED else ())
            + (("config",) if name == "conversation_relevance" else ()),
            default_pass_mark=pass_mark(name),
        )
    checks = {
        "contains": check_contains,
        "contains_all": check_contains,
        "contains_any": check_contains_any,
        "icontains": check_icontains,
        "icontains_all": check_icontains,
        "icontains_any": check_icontains_any,
        "starts_with": check_starts_with,
        "ends_with": check_ends_with,
        "equals": check_equals,
        "typeof": check_typeof,
    }
    for name, check in checks.items():
        registry.register(name, DeterministicEvaluator(check), ("value", "negate"))
    registry.register("regex", RegexEvaluator(), ("value", "negate", "flags"))
    registry.register(
        "word_count", DeterministicEvaluator(check_word_count), ("min", "max", "negate")
    )
    registry.register(
        "is_json",
        DeterministicEvaluator(check_is_json, heavy=True, light=plain_json_check),
        ("schema", "negate"),
    )
    registry.register(
        "contains_json",
        DeterministicEvaluator(check_contains_json, heavy=True),
        ("schema", "negate"),
    )
    registry.register("field_accuracy", FieldAccuracyEvaluator(), ("fields", "aggregation"))
    registry.register("select_best", SelectBestEvaluator(), ("value", "target"))
    registry.register("max_score", SelectBestEvaluator(), ("value",))
    for name, check in (
        ("is_xml", check_is_xml),
        ("contains_xml", check_contains_xml),
        ("is_sql", check_is_sql),
    ):
        registry.register(name, DeterministicEvaluator(check, heavy=True), ("value", "negate"))
    scripts = ProgramAssertEvaluator(JavascriptEvaluator())
    for name in ("javascript", "python", "ruby"):
        registry.register(
            name, scripts, ("value", "config", "negate", "test_vars", "cwd"), threshold="limit"
        )
    _register_metrics(registry)
    registry.register("tool_trajectory", ToolTrajectoryEvaluator(), _TRAJECTORY_OPTIONS)
    registry.register(
        "skill_trigger", SkillTriggerEvaluator(), ("skill", "should_trigger", "value")
    )
    for name in TOOL_CALL_GRADERS:
        registry.register(name, ToolCallsEvaluator(), ("value", "negate"))
    registry.register("finish_reason", FinishReasonEvaluator(), ("value",))
    registry.register(
        "code_judge", CodeJudgeEvaluator(), ("command", "script", "cwd", "config", "target")
    )
    composite_options = ("evaluators", "assertions", "assert", "aggregator")
    registry.register("composite", CompositeEvaluator(registry), composite_options)
    return registry


_TRAJECTORY_OPTIONS = ("mode", "minimums", "expected", "args_match", "argsMatch")
_EXECUTION_OPTIONS = (
    "max_tool_calls",
    "max_llm_calls",
    "max_tokens",
    "max_input_tokens",
    "max_output_tokens",
    "max_cost_usd",
    "max_duration_ms",
    "target_exploration_ratio",
    "exploration_tolerance",
    *LIMIT_ALIASES,
)


def _register_metrics(registry: EvaluatorRegistry) -> None:
    registry.register(
        "latency", SingleMetricEvaluator("latency_ms", "latency_ms"), threshold="limit"
    )
    registry.register(
        "cost", SingleMetricEvaluator("max_cost_usd", "cost_usd"), ("budget",), threshold="limit"
    )
    registry.register("execution_metrics", ExecutionMetricsEvaluator(), _EXECUTION_OPTIONS)
    for name, scorer in SCORERS.items():
        options = ("value", "n", "negate") if name == "rouge_n" else ("value", "negate")
        registry.register(
            name, MetricEvaluator(scorer), options, default_pass_mark=DEFAULT_PASS_MARKS[name]
        )
    registry.register("levenshtein", LevenshteinEvaluator(), ("value", "negate"), threshold="limit")
    registry.register(
        "similar", SimilarEvaluator(), ("value", "negate", "provider", "measure"), threshold="limit"
    )
    registry.register("moderation", ModerationEvaluator(), ("value", "provider", "target"))
    registry.register(
        "classifier",
        ClassifierEvaluator(),
        ("value", "negate", "provider", "target"),
        threshold="limit",
    )


EVALUATORS = build_registry()
"""The built-in evaluators (stateless, shared by every run)."""

RUNNABLE_AGGREGATORS = frozenset(
    {"weighted_average", "threshold", "all", "any", "code_judge", "llm_judge"}
)
"""Aggregators a ``composite`` runs (``composite`` module)."""

EVALUATOR_TYPES: tuple[str, ...] = tuple(EVALUATORS.types)
"""The grader types that run today (canonical names)."""


def runnable_catalog() -> list[tuple[GraderType, bool]]:
    """Every catalog type with whether it runs today (for documentation and checks)."""
    return [(entry, EVALUATORS.runs(entry.name)) for entry in GRADER_TYPES]
