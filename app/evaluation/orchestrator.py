"""Running cases: candidate -> evaluators -> one ``ResultRecord`` per case.

The one module that runs cases (through the steps of ``case_steps``; a live conversation's
turns through ``conversations``). ``evaluate_case`` never raises for a failure of its case (a
provider error after retries, a timeout, a broken evaluator): the record says ``error`` or
``judge_error``. ``run_cases`` runs a suite's cases under ``plan.max_concurrency`` inside an
``asyncio.TaskGroup``, so cancelling it cancels and awaits every case.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from app.evaluation.agent_rules import with_agent_rules
from app.evaluation.budget import Spending
from app.evaluation.case_steps import (
    CaseState,
    ask_candidate,
    candidate_failure,
    grade,
    note_answer,
    raw_request,
)
from app.evaluation.context import CaseContext
from app.evaluation.conversations import converse
from app.evaluation.known_answers import KnownAnswer
from app.evaluation.plan import RunPlan
from app.evaluation.records import ResultRecord
from app.evaluation.trials import combine_trials, decided
from app.evaluation.workspaces import CaseWorkspace, WorkspaceError, case_workspace
from app.evaluators.aggregate import Combined, combine
from app.evaluators.code.scoring_function import scored_by_function
from app.evaluators.registry import EVALUATORS, EvaluatorRegistry
from app.formatting.messages import FormattedPrompt
from app.observability.logging import bind_log_context
from app.providers.base import CallRole, ProviderResponse
from app.providers.errors import ProviderError
from app.suites.model import EvalCase, FormattedCase
from app.time_limits import time_limit

UNGRADED = Combined("ok", None, "pass", reasoning="ungraded: the test has no assertions")
"""A promptfoo test with no assertions passes ungraded, its answer kept."""

logger = logging.getLogger("app.evaluation")

OnResult = Callable[[ResultRecord], Awaitable[None]]


async def evaluate_case(
    formatted: FormattedCase,
    plan: RunPlan,
    context: CaseContext,
    *,
    known: KnownAnswer | None = None,
    registry: EvaluatorRegistry = EVALUATORS,
) -> ResultRecord:
    """Run one case and return its record; a failure of the case is recorded, not raised.

    Args:
        formatted: The case to run, with the prompt formatted for the run's candidate.
        plan: The run's plan.
        context: Targets and the response cache.
        known: What the candidate produced before, to grade again: it is not called.
        registry: The evaluators by type.
    """
    case = formatted.case
    trials = case.trials or plan.trials
    if case.missing_files:
        missing = ", ".join(case.missing_files)
        return CaseState(case=case, plan=plan).record(error=f"file not found: {missing}")
    if case.error is not None:
        return CaseState(case=case, plan=plan).record(error=case.error)
    with bind_log_context(case_id=case.id):
        if known is not None or trials.count == 1:
            state = CaseState(case=case, plan=plan)
            if known is not None and known.usage is not None:
                state.ledger.carry(CallRole.CANDIDATE, plan.target, known.usage)
            state.ledger.latency.candidate = known.latency_ms if known else None
            return await _guarded(state, formatted, context, known, registry)
        records: list[ResultRecord] = []
        for _ in range(trials.count):
            state = CaseState(case=case, plan=plan)
            records.append(await _guarded(state, formatted, context, None, registry))
            if trials.early_exit and decided(trials.strategy, records):
                break
        return combine_trials(records, trials, case.thresholds or plan.thresholds)


async def _guarded(
    state: CaseState,
    formatted: FormattedCase,
    context: CaseContext,
    known: KnownAnswer | None,
    registry: EvaluatorRegistry,
) -> ResultRecord:
    """The case run under its time limit; every failure of it becomes its record."""
    case, plan = state.case, state.plan
    deadline = time_limit(plan.case_timeout_seconds)
    try:
        async with deadline:
            return await _run_case(state, formatted.prompt, context, known, registry)
    except TimeoutError as exc:
        if not deadline.expired():
            logger.exception("case %r failed", case.id)
            return state.record(error=f"internal error while running the case: {exc!r}")
        return state.record(error=f"the case timed out after {plan.case_timeout_seconds:g} s")
    except ProviderError as exc:
        return state.record(error=candidate_failure(plan, exc))
    except WorkspaceError as exc:
        return state.record(error=str(exc))
    except Exception as exc:  # the case boundary: one case's fault never ends the run
        logger.exception("case %r failed", case.id)
        return state.record(error=f"internal error while running the case: {exc!r}")


async def _run_case(
    state: CaseState,
    formatted: FormattedPrompt,
    context: CaseContext,
    known: KnownAnswer | None,
    registry: EvaluatorRegistry,
) -> ResultRecord:
    """The case, in a workspace of its own when the suite has one and the candidate runs."""
    workspace = state.plan.workspace
    if workspace is None or known is not None:
        return await _attempt(state, formatted, context, known, registry, None)
    async with case_workspace(
        workspace, context.programs, state.case.id, context.repositories
    ) as folder:
        if folder.agent_rules_paths:  # AgentV's agent-rules: its graders read what it named
            state.case = with_agent_rules(state.case, folder.agent_rules_paths)
        return await _attempt(state, formatted, context, None, registry, folder)


async def _attempt(
    state: CaseState,
    formatted: FormattedPrompt,
    context: CaseContext,
    known: KnownAnswer | None,
    registry: EvaluatorRegistry,
    workspace: CaseWorkspace | None,
) -> ResultRecord:
    case = state.case
    if known is not None:
        state.file_changes = known.file_changes
    if case.conversation is not None:
        return await converse(state, case.conversation, context, registry, workspace, known)
    state.raw_request = raw_request(formatted)
    response: ProviderResponse | None = None
    if known is not None:
        candidate_answer = known.text
    elif case.given_output is not None:  # promptfoo's providerOutput: the target is not called
        candidate_answer = case.given_output
    else:
        response = await ask_candidate(state, formatted, context, workspace)
        candidate_answer = response.text
    await note_answer(state, candidate_answer, response, workspace)
    if not case.graded:
        return state.record(UNGRADED)
    state.outcomes = await grade(
        state, case, formatted.question, candidate_answer, context, registry, workspace
    )
    combined = combine(state.outcomes, case.thresholds or state.plan.thresholds)
    if case.scoring_function is not None:  # promptfoo's assertScoringFunction
        combined = await scored_by_function(
            case.scoring_function, state.outcomes, case.evaluators, combined, context.programs
        )
    return state.record(combined)


def not_run(case: EvalCase, plan: RunPlan, error: str) -> ResultRecord:
    """The record of a case that was not run, saying why."""
    return CaseState(case=case, plan=plan).record(error=error)


async def run_cases(
    cases: Sequence[FormattedCase], plan: RunPlan, context: CaseContext, on_result: OnResult
) -> None:
    """Run every case, at most ``plan.max_concurrency`` at once, within ``plan.budget_usd``.

    Each record goes to ``on_result`` as soon as its case finishes (not in suite order).
    Cancelling this coroutine cancels every running case and waits for them; an exception
    from ``on_result`` cancels the other cases and propagates.
    """
    slots = asyncio.Semaphore(plan.max_concurrency)
    spending = Spending(plan.budget_usd) if plan.budget_usd is not None else None

    async def run_one(case: FormattedCase) -> None:
        async with slots:
            if spending is not None and spending.exhausted():
                record = not_run(case.case, plan, spending.refusal())
            else:
                record = await evaluate_case(case, plan, context)
                if spending is not None:
                    spending.add(record)
        await on_result(record)

    async with asyncio.TaskGroup() as group:
        for case in cases:
            group.create_task(run_one(case))
