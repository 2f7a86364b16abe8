"""``prepare_run``: the one way a request becomes a run, for ``/evaluate`` and ``/runs``.

Load the suite (checks and files), hold it to the case limit, resolve the plan (targets,
concurrency, mode), then format every case once: what ``/validate`` shows is what runs.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio.to_thread

from app.errors import FieldError, InvalidRequest, ServiceError
from app.evaluation.context import CaseContext, TargetLookup
from app.evaluation.plan import build_run_plan, compares_arms, format_options
from app.evaluation.prepared import PreparedRun
from app.evaluators.code.programs import ProgramRunner
from app.formatting import FormatOptions
from app.schemas.evaluate import EvaluateRequest
from app.settings import Settings
from app.suites.files.resolve import FileSource
from app.suites.loader import format_cases, read_suite, suite_error
from app.suites.model import EvalSuite, FormattedCase
from app.suites.tool_use import ToolUse
from app.suites.workspaces.git_sources import GitSources

TooManyCases = Callable[[int, str], ServiceError]
"""The error for a suite whose evaluations (described: ``200 cases x 100 trials = 20000
evaluations``) are over the route's limit."""


def evaluations(suite: EvalSuite) -> tuple[int, str]:
    """How many evaluations a suite's cases make (cases x trials), and that count described."""
    counts = [(case.trials or suite.trials).count for case in suite.cases]
    total, cases = sum(counts), len(counts)
    if total == cases:
        return total, f"{cases} cases"
    if len(set(counts)) == 1:
        return total, f"{cases} cases x {counts[0]} trials = {total} evaluations"
    return total, f"{cases} cases with their trials = {total} evaluations"


async def prepare_run(
    request: EvaluateRequest,
    settings: Settings,
    targets: TargetLookup,
    *,
    max_cases: int,
    too_many: TooManyCases,
    use_cache: bool = False,
) -> PreparedRun:
    """Check the suite and its files, plan the run and format its cases; no provider is called.

    Raises:
        InvalidRequest: The suite, a file or a target is not valid (every problem listed).
        ServiceError: ``too_many(...)`` when the suite's cases x trials are over ``max_cases``.
    """
    report = await read_suite(
        request.suite,
        file_source=FileSource.from_settings(settings, request.files),
        case_ids=request.case_ids,
        allow_missing_files=request.allow_missing_files,
        code_graders=settings.code_graders,
        hosted_tools=settings.hosted_tools,
        image_urls=settings.image_urls,
        env=request.env,
        git=GitSources.from_settings(settings),
        programs=ProgramRunner.from_settings(settings),
    )
    if report.suite is None or report.errors:
        raise suite_error(report.errors)
    plan = build_run_plan(
        report.suite,
        targets,
        default_max_concurrency=settings.run_concurrency,
        target=request.target,
        judge_target=request.judge_target,
        max_concurrency=request.max_concurrency,
        guideline_patterns=request.guideline_patterns,
        use_cache=use_cache,
        judge_attempts=settings.judge_retries + 1,
        case_timeout_seconds=settings.case_timeout_seconds,
        budget_usd=request.budget_usd,
        targets_list=request.target_names,
    )
    if plan.compares_arms is False and compares_arms(report.suite):
        raise InvalidRequest(
            "select-best and max-score compare the answers of a run's arms, and this run has "
            "one: give the suite several prompts or providers, or the request several targets",
            errors=[
                FieldError(
                    path="suite",
                    message="a select-best or max-score grader needs a run with several arms",
                )
            ],
        )
    count, described = evaluations(report.suite)
    if arms := len(plan.arm_plans):
        count, described = count * arms, f"{described} x {arms} arms = {count * arms} evaluations"
    if count > max_cases:  # trials and arms multiply: every evaluation counts toward the cap
        raise too_many(count, described)
    formatted: dict[tuple[FormatOptions, str | None], tuple[FormattedCase, ...]] = {}
    suite_targets = {*report.suite.targets, *filter(None, [report.suite.target])}
    for arm_plan in (plan, *plan.arm_plans):  # arms on like targets share their prompts
        key = (format_options(arm_plan), arm_plan.arm.prompt if arm_plan.arm else None)
        if key not in formatted:
            formatted[key] = await anyio.to_thread.run_sync(format_cases, report, *key)
    run = PreparedRun(
        plan=plan,
        context=CaseContext(
            providers=targets,
            programs=ProgramRunner.from_settings(settings),
            files=report.files,
        ),
        files=report.files,
        cases=(  # with arms, every case (the arms' order); each arm keeps its own
            formatted[format_options(plan), None]
            if plan.arm_plans
            else on_target(formatted[format_options(plan), None], plan.target, suite_targets)
        ),
        warnings=tuple(dict.fromkeys(report.warnings)),
    )
    arm_cases = {
        index: with_tools(
            on_target(
                formatted[format_options(arm_plan), arm_plan.arm.prompt if arm_plan.arm else None],
                arm_plan.target,
                suite_targets,
            ),
            report.suite.target_tools.get(arm_plan.target),
        )
        for index, arm_plan in enumerate(plan.arm_plans)
    }
    return run.with_arm_plans(arm_cases)


def on_target(
    cases: tuple[FormattedCase, ...], target: str, suite_targets: set[str]
) -> tuple[FormattedCase, ...]:
    """The cases that run on ``target``.

    A case naming its targets (a promptfoo test's ``providers``) runs only on those, when the
    run's target is one of the suite's own (a request's other targets run every case).
    """
    if target not in suite_targets:
        return cases
    return tuple(
        formatted
        for formatted in cases
        if not formatted.case.only_targets or target in formatted.case.only_targets
    )


def with_tools(
    cases: tuple[FormattedCase, ...], tools: ToolUse | None
) -> tuple[FormattedCase, ...]:
    """An arm's cases, its target's tools (a provider's config) under each case's own."""
    if tools is None:
        return cases
    return tuple(
        formatted.model_copy(
            update={
                "case": formatted.case.model_copy(
                    update={
                        "tool_use": formatted.case.tool_use.merged_over(tools)
                        if formatted.case.tool_use
                        else tools
                    }
                )
            }
        )
        for formatted in cases
    )
