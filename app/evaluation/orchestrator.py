"""Running cases: candidate -> evaluators -> one ``ResultRecord`` per case.

The one module that runs cases. ``evaluate_case`` never raises for a failure of its case (a
provider error after retries, a timeout, a broken evaluator): the record says ``error`` or
``judge_error``. ``run_cases`` runs a suite's cases under ``plan.max_concurrency`` inside an
``asyncio.TaskGroup``, so cancelling it cancels and awaits every case.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from app.evaluation.budget import Spending
from app.evaluation.context import CallLedger, CaseContext, RecordedTarget, ResponseCache
from app.evaluation.conversations import (
    GradedTurn,
    answered,
    combine_turns,
    failed,
    graded_turn,
    skipped_turn,
    turn_case,
    unanswered_turn,
)
from app.evaluation.known_answers import KnownAnswer
from app.evaluation.plan import RunPlan, format_options
from app.evaluation.records import RawRequest, ResultRecord, TurnResult
from app.evaluation.trials import combine_trials, decided
from app.evaluation.workspaces import CaseWorkspace, WorkspaceError, case_workspace
from app.evaluators.aggregate import Combined, combine
from app.evaluators.base import CandidateRun, EvaluationContext, EvaluatorOutcome, JudgeClient
from app.evaluators.config import DEFAULT_EVALUATOR
from app.evaluators.registry import EVALUATORS, EvaluatorRegistry
from app.evaluators.results import CaseStatus
from app.evaluators.verdicts import status_for
from app.formatting.messages import FormattedPrompt, Message
from app.formatting.prompt import format_prompt
from app.observability.logging import bind_log_context
from app.providers.base import CallRole, ProviderRequest, ProviderResponse, ToolCall
from app.providers.errors import ProviderError
from app.providers.target_proxy import TargetProxy
from app.suites.model import Conversation, EvalCase, FormattedCase
from app.time_limits import time_limit

logger = logging.getLogger("app.evaluation")

OnResult = Callable[[ResultRecord], Awaitable[None]]


@dataclass
class _CaseState:
    """What is known of a case so far, so that a failure still yields a full record."""

    case: EvalCase
    plan: RunPlan
    ledger: CallLedger = field(default_factory=CallLedger)
    raw_request: RawRequest | None = None
    candidate_answer: str | None = None
    candidate: CandidateRun = field(default_factory=CandidateRun)
    outcomes: Sequence[EvaluatorOutcome] = ()
    file_changes: str | None = None
    turns: list[TurnResult] | None = None

    def record(self, combined: Combined | None = None, *, error: str | None = None) -> ResultRecord:
        """The case's result record, graded by ``combined`` or failed with ``error``."""
        status: CaseStatus = "error"
        score, verdict = None, None
        if combined is not None:
            error = combined.error
            score, verdict = combined.score, combined.verdict
            if combined.status != "ok":
                status = combined.status
            elif verdict is not None:
                status = status_for(verdict)
        raw = next((o.raw_request for o in self.outcomes if o.raw_request is not None), None)
        return ResultRecord(
            eval_id=self.case.id,
            dataset=self.plan.dataset,
            conversation_id=self.case.conversation_id,
            status=status,
            score=score,
            verdict=verdict,
            hits=combined.hits if combined else [],
            misses=combined.misses if combined else [],
            reasoning=combined.reasoning if combined else None,
            candidate_answer=self.candidate_answer,
            target=self.plan.target,
            judge_target=self.plan.judge_target,
            timestamp=datetime.now(UTC),
            raw_request=self.raw_request,
            evaluator_raw_request=raw,
            evaluator_results=[outcome.result for outcome in self.outcomes],
            usage=self.ledger.usage,
            latency_ms=self.ledger.latency,
            attempts=self.ledger.attempts,
            cached=self.ledger.cached() if self.plan.use_cache else None,
            cost_usd=self.ledger.cost,
            tool_calls=list(self.candidate.tool_calls),
            file_changes=self.file_changes,
            turns=self.turns,
            error=error,
        )


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
    with bind_log_context(case_id=case.id):
        if known is not None or trials.count == 1:
            state = _CaseState(case=case, plan=plan)
            if known is not None and known.usage is not None:
                state.ledger.usage.candidate = known.usage.model_copy()
            state.ledger.latency.candidate = known.latency_ms if known else None
            return await _guarded(state, formatted, context, known, registry)
        records: list[ResultRecord] = []
        for _ in range(trials.count):
            state = _CaseState(case=case, plan=plan)
            records.append(await _guarded(state, formatted, context, None, registry))
            if trials.early_exit and decided(trials.strategy, records):
                break
        return combine_trials(records, trials, case.thresholds or plan.thresholds)


async def _guarded(
    state: _CaseState,
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
        return state.record(error=_candidate_failure(plan, exc))
    except WorkspaceError as exc:
        return state.record(error=str(exc))
    except Exception as exc:  # the case boundary: one case's fault never ends the run
        logger.exception("case %r failed", case.id)
        return state.record(error=f"internal error while running the case: {exc!r}")


async def _run_case(
    state: _CaseState,
    formatted: FormattedPrompt,
    context: CaseContext,
    known: KnownAnswer | None,
    registry: EvaluatorRegistry,
) -> ResultRecord:
    """The case, in a workspace of its own when the suite has one and the candidate runs."""
    workspace = state.plan.workspace
    if workspace is None or known is not None:
        return await _attempt(state, formatted, context, known, registry, None)
    async with case_workspace(workspace, context.programs, state.case.id) as folder:
        return await _attempt(state, formatted, context, None, registry, folder)


async def _attempt(
    state: _CaseState,
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
        return await _converse(state, case.conversation, context, registry, workspace, known)
    state.raw_request = raw_request(formatted)
    response: ProviderResponse | None = None
    if known is None:
        response = await _ask_candidate(state, formatted, context, workspace)
        candidate_answer = response.text
    else:
        candidate_answer = known.text
    await _answered(state, candidate_answer, response, workspace)
    state.outcomes = await _grade(
        state, case, formatted.question, candidate_answer, context, registry, workspace
    )
    return state.record(combine(state.outcomes, case.thresholds or state.plan.thresholds))


async def _converse(
    state: _CaseState,
    conversation: Conversation,
    context: CaseContext,
    registry: EvaluatorRegistry,
    workspace: CaseWorkspace | None,
    known: KnownAnswer | None,
) -> ResultRecord:
    """A live conversation: each turn asked and graded in order, then the whole of it.

    With ``known`` (a regrade) each turn's stored answer is graded again; a turn with none
    (an earlier run stopped before it) fails the case.
    """
    case, plan = state.case, state.plan
    thresholds = case.thresholds or plan.thresholds
    options = format_options(plan)
    history: list[Message] = list(case.input_messages)
    graded: list[GradedTurn] = []
    state.turns = []
    tool_calls: list[ToolCall] = []
    question = ""
    halted = False
    for number, turn in enumerate(conversation.turns, start=1):
        if halted:
            state.turns.append(skipped_turn(number))
            continue
        prompt = format_prompt([*history, *turn.input_messages], context.files, options)
        question = prompt.question
        state.raw_request = raw_request(prompt)
        response: ProviderResponse | None = None
        if known is not None:
            answer = known.turns[number - 1] if number <= len(known.turns) else None
            if answer is None:
                graded.append(unanswered_turn(number, question))
                state.turns.append(graded[-1].result)
                halted = True
                continue
        else:
            try:
                response = await _ask_candidate(state, prompt, context, workspace)
            except ProviderError as exc:
                error = _candidate_failure(plan, exc)
                state.turns.append(
                    TurnResult(turn=number, status="error", question=question, error=error)
                )
                raise
            answer = response.text
        await _answered(state, answer, response, workspace)
        tool_calls.extend(state.candidate.tool_calls)
        outcomes = await _grade(
            state, turn_case(case, turn), question, answer, context, registry, workspace
        )
        grade = combine(outcomes, thresholds)
        graded.append(graded_turn(number, question, answer, grade, outcomes))
        state.turns.append(graded[-1].result)
        history = answered(history, turn, answer)
        halted = conversation.on_turn_failure == "stop" and failed(graded[-1])
    state.candidate = replace(state.candidate, tool_calls=tuple(tool_calls))
    overall = None
    if case.evaluators and state.candidate_answer is not None:
        state.outcomes = await _grade(
            state, case, question, state.candidate_answer, context, registry, workspace
        )
        overall = combine(state.outcomes, thresholds)
    return state.record(combine_turns(conversation, graded, overall, thresholds))


def _candidate_failure(plan: RunPlan, exc: ProviderError) -> str:
    return f"candidate target {plan.target!r} failed: {exc.detail}"


def raw_request(formatted: FormattedPrompt) -> RawRequest:
    """What the candidate is given, as the record shows it."""
    return RawRequest(
        question=formatted.question,
        guidelines=formatted.guidelines,
        guideline_paths=list(formatted.guideline_paths),
        chat_prompt=list(formatted.chat_prompt),
    )


async def _ask_candidate(
    state: _CaseState,
    formatted: FormattedPrompt,
    context: CaseContext,
    workspace: CaseWorkspace | None,
) -> ProviderResponse:
    plan = state.plan
    cache = context.cache if plan.use_cache else None
    candidate = RecordedTarget(
        context.providers.get(plan.target), CallRole.CANDIDATE, state.ledger, cache
    )
    folder = str(workspace.path) if workspace else None
    return await candidate.complete(
        ProviderRequest.for_candidate(formatted, state.case.id, plan.candidate_options, folder)
    )


async def _answered(
    state: _CaseState,
    answer: str,
    response: ProviderResponse | None,
    workspace: CaseWorkspace | None,
) -> None:
    """Note the candidate's answer, its call's figures and what it changed in the workspace."""
    state.candidate_answer = answer
    state.candidate = candidate_run(state.ledger, response)
    if workspace is not None:
        state.file_changes = await workspace.changes()


async def _grade(
    state: _CaseState,
    case: EvalCase,
    question: str,
    answer: str,
    context: CaseContext,
    registry: EvaluatorRegistry,
    workspace: CaseWorkspace | None,
) -> list[EvaluatorOutcome]:
    """``case``'s graders on ``answer`` to ``question``."""
    plan = state.plan
    cache = context.cache if plan.use_cache else None
    evaluation = EvaluationContext(
        case=case,
        question=question,
        candidate_answer=answer,
        judge=_judge(context, state.ledger, plan.judge_target, cache),
        thresholds=case.thresholds or plan.thresholds,
        resolve_judge=lambda name: _judge(context, state.ledger, name, cache),
        judge_attempts=plan.judge_attempts,
        candidate=state.candidate,
        programs=context.programs,
        target_names=tuple(context.providers.names()),
        program_targets=TargetProxy,
        workspace_path=str(workspace.path) if workspace else None,
        file_changes=state.file_changes,
    )
    return await _run_evaluators(case, evaluation, registry)


def candidate_run(ledger: CallLedger, response: ProviderResponse | None) -> CandidateRun:
    """The candidate call's figures (what the ledger counted, what the target reported)."""
    tokens = ledger.usage.candidate
    return CandidateRun(
        latency_ms=ledger.latency.candidate,
        input_tokens=tokens.input_tokens,
        output_tokens=tokens.output_tokens,
        cost_usd=ledger.cost.candidate,
        duration_ms=response.duration_ms if response else None,
        llm_calls=(response.llm_calls or ledger.calls.get("candidate")) if response else None,
        tool_calls=response.tool_calls if response else (),
    )


def _judge(
    context: CaseContext, ledger: CallLedger, name: str, cache: ResponseCache | None
) -> JudgeClient:
    return RecordedTarget(context.providers.get(name), CallRole.JUDGE, ledger, cache)


async def _run_evaluators(
    case: EvalCase, evaluation: EvaluationContext, registry: EvaluatorRegistry
) -> list[EvaluatorOutcome]:
    configs = case.evaluators or (DEFAULT_EVALUATOR,)
    if len(configs) == 1:
        return [await registry.run(configs[0], evaluation)]
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(registry.run(config, evaluation)) for config in configs]
    return [task.result() for task in tasks]


def not_run(case: EvalCase, plan: RunPlan, error: str) -> ResultRecord:
    """The record of a case that was not run, saying why."""
    return _CaseState(case=case, plan=plan).record(error=error)


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
