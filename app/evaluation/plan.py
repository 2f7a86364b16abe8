"""``RunPlan``: the resolved settings of one run (targets, concurrency, thresholds...)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from pydantic import ValidationError

from app.errors import InvalidRequest
from app.evaluation.arms import RunArm, arm_targets
from app.evaluation.context import RunnableTarget, TargetLookup
from app.evaluators.code.derived_metrics import DerivedMetrics
from app.evaluators.config import EvaluatorConfig
from app.evaluators.judges.classifier import classifier_problems
from app.evaluators.judges.embedding_similarity import embedding_problems
from app.evaluators.judges.moderation import moderation_problems
from app.evaluators.judges.select_best import COMPARED
from app.evaluators.verdicts import Thresholds
from app.formatting.messages import (
    DEFAULT_GUIDELINE_PATTERNS,
    DEFAULT_SYSTEM_PROMPT,
    FormatOptions,
    Mode,
)
from app.providers.base import ModelOptions
from app.providers.errors import EmbeddingsTargetMisused
from app.settings.targets import DEFAULT_TARGET
from app.suites.model import EvalSuite, Trials, Workspace


@dataclass(frozen=True)
class RunPlan:
    """How a run's cases are executed; built once per run by ``build_run_plan``.

    Attributes:
        target: The candidate target's name.
        judge_target: The judge target's name (request, else the target's ``judge_target``,
            else the target itself).
        max_concurrency: Cases run at once (request, else suite, else target, else the
            settings default).
        dataset: The suite's dataset name, copied into every record.
        thresholds: Verdict thresholds (the suite's).
        use_cache: Whether provider replies are read from and written to the response cache.
        mode: How the candidate's prompts are formatted: ``agent`` targets get file
            references, API targets (``lm``) file contents.
        guideline_patterns: Globs that mark referenced files as guidelines.
        judge_attempts: Judge calls per evaluator before a reply is a ``judge_error``.
        case_timeout_seconds: Time limit of one case; ``None`` for none.
        trials: How often each case runs (the suite's ``repeat``; a case's own wins).
        candidate_options: Sampling options of every candidate call (``/v1`` runs'
            ``sampling_params``); unset ones are ``target_options``'.
        target_options: The model settings the suite gives the candidate target (a promptfoo
            provider's ``config``); unset ones are the target's own.
        workspace: The suite's agent workspace: each case works in a fresh copy of it.
        budget_usd: The suite's cost budget: once the run's finished cases cost this much, no
            more of its cases start (those not started are recorded as not run).
        default_system_prompt: The system message of cases with no system turn: the suite's,
            else the candidate target's, else AgentV's wording (``""``: none).
        arm: The arm this plan runs (a plan of ``arm_plans``); None for a one-target run.
        arm_plans: A run on several targets: one plan per arm, in arm order (the run's own
            fields are its first arm's, its ``max_concurrency`` the sum of the arms').
        derived_metrics: promptfoo's ``derivedMetrics``, computed in the run's summary.
        compares_arms: Some case has a grader that compares the arms' answers
            (``select-best``): settled once every arm has answered.
    """

    target: str
    judge_target: str
    max_concurrency: int
    judge_attempts: int
    dataset: str = "default"
    thresholds: Thresholds = field(default_factory=Thresholds)
    use_cache: bool = False
    mode: Mode = "lm"
    guideline_patterns: tuple[str, ...] = DEFAULT_GUIDELINE_PATTERNS
    case_timeout_seconds: float | None = None
    trials: Trials = field(default_factory=Trials)
    candidate_options: ModelOptions = field(default_factory=ModelOptions)
    target_options: ModelOptions = field(default_factory=ModelOptions)
    workspace: Workspace | None = None
    budget_usd: float | None = None
    default_system_prompt: str = DEFAULT_SYSTEM_PROMPT
    arm: RunArm | None = None
    arm_plans: tuple[RunPlan, ...] = ()
    compares_arms: bool = False
    derived_metrics: DerivedMetrics | None = None

    @property
    def arms(self) -> tuple[RunArm, ...]:
        """The run's arms (none for a run on one target)."""
        return tuple(plan.arm for plan in self.arm_plans if plan.arm is not None)

    def for_arm(self, index: int | None) -> RunPlan:
        """The plan of arm ``index`` (this plan for ``None`` or a run without arms)."""
        if index is None or not self.arm_plans:
            return self
        return self.arm_plans[index]


def with_arms(first: RunPlan, plans: Sequence[RunPlan]) -> RunPlan:
    """The plan of a run whose arms are ``plans``: the first arm's settings, every arm's slots."""
    return replace(
        first,
        arm=None,
        arm_plans=tuple(plans),
        max_concurrency=sum(plan.max_concurrency for plan in plans),
    )


def build_run_plan(
    suite: EvalSuite,
    targets: TargetLookup,
    *,
    default_max_concurrency: int,
    target: str | None = None,
    judge_target: str | None = None,
    max_concurrency: int | None = None,
    guideline_patterns: Sequence[str] | None = None,
    use_cache: bool = False,
    judge_attempts: int,
    case_timeout_seconds: float | None = None,
    budget_usd: float | None = None,
    targets_list: Sequence[str] = (),
) -> RunPlan:
    """Resolve a run's plan; raises ``UnknownTarget`` (422) for a target not configured.

    Judge targets named by evaluators (``target``) are checked here too, before any call.
    ``targets_list`` (the request's, else the suite's ``targets`` unless ``target`` is
    given) with two targets or more, or a suite with several prompts, makes a run of one arm
    per (target, prompt), each planned as a run on that target alone.
    """
    # A target the request names runs the suite on it alone, whatever the suite lists.
    names = list(targets_list or (() if target else suite.targets))
    if len(set(names)) < 2:  # one target: the prompts alone may make arms
        only = target or next(iter(names), None) or suite.target or DEFAULT_TARGET
        names = [targets.get(only).name]
    arms = arm_targets(names, suite.prompts, suite.target_prompts)
    if arms:
        one_target = suite.model_copy(update={"targets": (), "prompts": ()})
        plans = [
            replace(
                build_run_plan(
                    one_target,
                    targets,
                    default_max_concurrency=default_max_concurrency,
                    target=arm.target,
                    judge_target=judge_target,
                    max_concurrency=max_concurrency,
                    guideline_patterns=guideline_patterns,
                    use_cache=use_cache,
                    judge_attempts=judge_attempts,
                    case_timeout_seconds=case_timeout_seconds,
                    budget_usd=budget_usd,
                ),
                arm=arm,
            )
            for arm in arms
        ]
        return replace(with_arms(plans[0], plans), compares_arms=compares_arms(suite))
    listed = next(iter(targets_list), None)
    candidate = targets.get(target or listed or suite.target or DEFAULT_TARGET)
    judge_name = judge_target or candidate.judge_target or candidate.name
    judge = targets.get(judge_name)
    for role, runtime in (("candidate", candidate), ("judge", judge)):
        if runtime.kind in ("embeddings", "moderation", "classifier"):
            raise EmbeddingsTargetMisused(runtime.name, role, runtime.kind)
    for name in evaluator_targets(suite):
        targets.get(name)
    settings = suite_settings(suite, candidate)
    check_judge_options(suite, targets, judge.name)
    problems = embedding_problems(suite_graders(suite), embedding_targets(targets))
    problems += moderation_problems(suite_graders(suite), moderation_targets(targets))
    problems += classifier_problems(suite_graders(suite), classifier_targets(targets))
    if problems:
        raise InvalidRequest(problems[0])
    return RunPlan(
        target=candidate.name,
        judge_target=judge.name,
        max_concurrency=1  # promptfoo runs tests that read earlier ones one at a time
        if in_order(suite)
        else max_concurrency
        or suite.max_concurrency
        or candidate.max_concurrency
        or default_max_concurrency,
        dataset=suite.dataset,
        thresholds=suite.thresholds,
        derived_metrics=suite.derived_metrics,
        use_cache=use_cache,
        mode=mode_of(candidate),
        guideline_patterns=tuple(guideline_patterns or suite.guideline_patterns),
        judge_attempts=judge_attempts,
        case_timeout_seconds=case_timeout_seconds,
        trials=suite.trials,
        target_options=settings,
        workspace=suite.workspace,
        budget_usd=budget_usd if budget_usd is not None else suite.budget_usd,
        default_system_prompt=next(
            prompt
            for prompt in (suite.system_prompt, candidate.system_prompt, DEFAULT_SYSTEM_PROMPT)
            if prompt is not None
        ),
    )


def suite_settings(suite: EvalSuite, candidate: RunnableTarget) -> ModelOptions:
    """The model settings the suite gives ``candidate``; one its API does not take is a 422."""
    settings = suite.target_options.get(candidate.name, ModelOptions())
    refused = candidate.untaken_options(settings)
    if refused:
        raise InvalidRequest(
            f"target {candidate.name!r} does not take {', '.join(refused)}, which the suite's "
            "provider config sets: remove it, or name a target whose API takes it"
        )
    return settings


def check_judge_options(suite: EvalSuite, targets: TargetLookup, judge: str) -> None:
    """Refuse (422) a grader's ``judge_options`` its judge target's API does not take."""
    for grader in suite_graders(suite):
        raw = (grader.model_extra or {}).get("judge_options")
        if not raw:
            continue
        try:
            options = ModelOptions.model_validate(raw)
        except ValidationError as exc:
            raise InvalidRequest(
                f"grader {grader.name!r}: judge_options: {exc.errors()[0]['msg']}"
            ) from exc
        runtime = targets.get(grader.target or judge)
        refused = runtime.untaken_options(options)
        if refused:
            raise InvalidRequest(
                f"grader {grader.name!r}: judge target {runtime.name!r} does not take "
                f"{', '.join(refused)} (its grading provider's config)"
            )


def in_order(suite: EvalSuite) -> bool:
    """Whether the suite's cases read earlier ones (``app.evaluation.sequential``)."""
    return any(case.sequence is not None for case in suite.cases)


def compares_arms(suite: EvalSuite) -> bool:
    """Whether a case of the suite has a grader comparing the arms (select-best, max-score)."""
    return any(grader.type in COMPARED for case in suite.cases for grader in case.all_graders())


def mode_of(target: RunnableTarget) -> Mode:
    """The formatting mode of a candidate: ``agent`` for agent targets, else ``lm``."""
    return "agent" if target.kind == "agent" else "lm"


def format_options(plan: RunPlan) -> FormatOptions:
    """How the run's cases are formatted for its candidate."""
    return FormatOptions(
        mode=plan.mode,
        guideline_patterns=plan.guideline_patterns,
        default_system_prompt=plan.default_system_prompt,
    )


def suite_graders(suite: EvalSuite) -> list[EvaluatorConfig]:
    """Every grader of the suite's cases (their turns' too; composites hold their children)."""
    return [config for case in suite.cases for config in case.all_graders()]


def embedding_targets(targets: TargetLookup) -> tuple[str, ...]:
    """The names of the embeddings targets (``similar`` graders embed with them)."""
    return tuple(name for name in targets.names() if targets.get(name).kind == "embeddings")


def moderation_targets(targets: TargetLookup) -> tuple[str, ...]:
    """The names of the moderation targets (``moderation`` graders call them)."""
    return tuple(name for name in targets.names() if targets.get(name).kind == "moderation")


def classifier_targets(targets: TargetLookup) -> tuple[str, ...]:
    """The names of the classifier targets (``classifier`` graders call them)."""
    return tuple(name for name in targets.names() if targets.get(name).kind == "classifier")


def evaluator_targets(suite: EvalSuite) -> list[str]:
    """Every judge target named by an evaluator of the suite (composites included), once."""
    names: dict[str, None] = {}
    pending = suite_graders(suite)
    while pending:
        config = pending.pop()
        if config.target:
            names.setdefault(config.target, None)
        pending.extend(config.evaluators)
    return list(names)
