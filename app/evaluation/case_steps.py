"""One case's steps: ask the candidate, note its answer, grade it, and what a record holds.

``CaseState`` is what is known of a case so far, so that a failure at any step still yields
a full record. The orchestrator runs a case through these steps once; a live conversation
(``app.evaluation.conversations``) once per turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.evaluation.context import CallLedger, CaseContext, RecordedTarget, ResponseCache
from app.evaluation.plan import (
    RunPlan,
    classifier_targets,
    embedding_targets,
    moderation_targets,
)
from app.evaluation.records import RawRequest, ResultRecord, TurnResult
from app.evaluation.tool_loop import CandidateStep, refuse_hosted_tools, run_tool_loop
from app.evaluation.workspaces import CaseWorkspace
from app.evaluators.aggregate import Combined
from app.evaluators.base import CandidateRun, EvaluationContext, EvaluatorOutcome, JudgeClient
from app.evaluators.config import DEFAULT_EVALUATOR
from app.evaluators.registry import EvaluatorRegistry
from app.evaluators.results import CaseStatus
from app.evaluators.verdicts import status_for
from app.formatting.messages import FormattedPrompt
from app.providers.access.target_proxy import TargetProxy
from app.providers.base import CallRole, ProviderRequest, ProviderResponse
from app.providers.errors import ProviderError, ProviderRejected
from app.settings.tools import ToolSpec, merged_tools
from app.suites.model import EvalCase


@dataclass
class CaseState:
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
    candidate_steps: list[CandidateStep] | None = None
    offered_tools: tuple[ToolSpec, ...] = ()

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
            arm=self.plan.arm,
            judge_target=self.plan.judge_target,
            timestamp=datetime.now(UTC),
            raw_request=self.raw_request,
            evaluator_raw_request=raw,
            evaluator_results=[outcome.result for outcome in self.outcomes],
            usage=self.ledger.usage,
            usage_by_target=self.ledger.targets,
            latency_ms=self.ledger.latency,
            attempts=self.ledger.attempts,
            cached=self.ledger.cached() if self.plan.use_cache else None,
            cost_usd=self.ledger.cost,
            tool_calls=list(self.candidate.tool_calls),
            candidate_steps=self.candidate_steps,
            file_changes=self.file_changes,
            turns=self.turns,
            error=error,
        )


def candidate_failure(plan: RunPlan, exc: ProviderError) -> str:
    """The error of a case whose candidate call failed (after its retries)."""
    return f"candidate target {plan.target!r} failed: {exc.detail}"


def raw_request(formatted: FormattedPrompt) -> RawRequest:
    """What the candidate is given, as the record shows it."""
    return RawRequest(
        question=formatted.question,
        guidelines=formatted.guidelines,
        guideline_paths=list(formatted.guideline_paths),
        chat_prompt=list(formatted.chat_prompt),
    )


async def ask_candidate(
    state: CaseState,
    formatted: FormattedPrompt,
    context: CaseContext,
    workspace: CaseWorkspace | None,
) -> ProviderResponse:
    """The candidate's reply to ``formatted`` (in the case's workspace folder, if any).

    A case with tools may make several calls (``app.evaluation.tool_loop``); the reply then
    carries every tool call made, and the state each step.
    """
    plan = state.plan
    cache = context.cache if plan.use_cache else None
    runtime = context.providers.get(plan.target)
    candidate = RecordedTarget(runtime, CallRole.CANDIDATE, state.ledger, cache)
    folder = str(workspace.path) if workspace else None
    options = plan.candidate_options.over(plan.target_options)
    request = ProviderRequest.for_candidate(formatted, state.case.id, options, folder)
    tool_use = state.case.tool_use
    if runtime.kind == "agent" and any(turn.parts for turn in formatted.chat_prompt):
        raise ProviderRejected(
            f"target {plan.target!r} is an agent: it is given the question as text, which "
            "shows an image_url part only as a marker; images are sent to API targets only",
            target=plan.target,
        )
    if tool_use is not None and runtime.kind == "agent":
        raise ProviderRejected(
            f"target {plan.target!r} is an agent: it takes no tools, canned tool results or "
            "response_format (they need an API target)",
            target=plan.target,
        )
    if tool_use is not None:
        refuse_hosted_tools(plan.target, tool_use.hosted, runtime)
    response, steps = await run_tool_loop(candidate, request, tool_use, context.programs)
    target_tools = getattr(getattr(runtime, "config", None), "tools", ())
    state.offered_tools = merged_tools(target_tools, tool_use.tools if tool_use else ())
    if tool_use is not None or (response.tool_calls and runtime.kind == "api"):
        state.candidate_steps = steps
    return response


async def note_answer(
    state: CaseState,
    answer: str,
    response: ProviderResponse | None,
    workspace: CaseWorkspace | None,
) -> None:
    """Note the candidate's answer, its call's figures and what it changed in the workspace."""
    state.candidate_answer = answer
    state.candidate = candidate_run(state.ledger, response, state.offered_tools)
    if workspace is not None:
        state.file_changes = await workspace.changes()


async def grade(
    state: CaseState,
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
        embedding_targets=embedding_targets(context.providers),
        moderation_targets=moderation_targets(context.providers),
        classifier_targets=classifier_targets(context.providers),
        program_targets=TargetProxy,
        workspace_path=str(workspace.path) if workspace else None,
        file_changes=state.file_changes,
    )
    return await _run_evaluators(case, evaluation, registry)


def candidate_run(
    ledger: CallLedger, response: ProviderResponse | None, tools: tuple[ToolSpec, ...] = ()
) -> CandidateRun:
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
        finish_reason=response.finish_reason if response else None,
        tools=tools,
        content=response.content if response else (),
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
