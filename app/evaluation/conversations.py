"""Live conversations: each turn asked and graded in order (``converse``), then one grade.

The orchestrator hands a conversation case to ``converse``, which runs each turn through the
steps of ``case_steps`` as the orchestrator runs a plain case:

- The candidate's messages on a turn are the case's input, then each earlier turn's user
  messages followed by the candidate's answer as an assistant message, then the turn's own.
  They are formatted like any case's input, so the turn's judge is given exactly the
  question the candidate saw.
- A turn fails when its graders fail it or cannot grade it; with ``on_turn_failure: stop``
  the turns after it are not run (they score 0) and the case fails.
- The case's score is the ``aggregation`` (mean, min, max) of the turns' scores and, when
  the case has graders of its own, the grade they give the whole conversation. An error of
  a turn or of those graders is the case's; an unmet required rubric anywhere fails it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from statistics import fmean

from app.evaluation.case_steps import (
    CaseState,
    ask_candidate,
    candidate_failure,
    grade,
    note_answer,
    raw_request,
)
from app.evaluation.context import CaseContext
from app.evaluation.known_answers import KnownAnswer
from app.evaluation.plan import format_options
from app.evaluation.records import ResultRecord, TurnResult, TurnStatus
from app.evaluation.workspaces import CaseWorkspace
from app.evaluators.aggregate import Combined, combine
from app.evaluators.base import EvaluatorOutcome
from app.evaluators.registry import EvaluatorRegistry
from app.evaluators.verdicts import Thresholds, status_for, verdict_for
from app.formatting.messages import Message
from app.formatting.prompt import format_prompt
from app.providers.base import ProviderResponse, ToolCall
from app.providers.errors import ProviderError
from app.suites.model import Conversation, ConversationTurn, EvalCase, TurnAggregation

AGGREGATIONS: dict[TurnAggregation, Callable[[Sequence[float]], float]] = {
    "mean": fmean,
    "min": min,
    "max": max,
}
UNANSWERED = (
    "no stored answer to grade again: the earlier run ended the conversation before this "
    "turn (run the case again)"
)


@dataclass(frozen=True)
class GradedTurn:
    """A turn that ran: its record entry and its grade."""

    result: TurnResult
    grade: Combined


def turn_case(case: EvalCase, turn: ConversationTurn) -> EvalCase:
    """The case as a turn's graders see it: the turn's graders and expected answer."""
    return case.model_copy(
        update={
            "evaluators": turn.evaluators,
            "expected_messages": turn.expected_messages,
            "reference_answer": turn.reference_answer,
            "conversation": None,
        }
    )


def answered(history: Sequence[Message], turn: ConversationTurn, answer: str) -> list[Message]:
    """The history after a turn: its user messages and the candidate's answer."""
    return [*history, *turn.input_messages, Message(role="assistant", content=answer)]


def graded_turn(
    number: int,
    question: str,
    answer: str,
    grade: Combined,
    outcomes: Sequence[EvaluatorOutcome],
) -> GradedTurn:
    """A turn's entry in the record, from its grade."""
    status: TurnStatus = "error"
    if grade.status != "ok":
        status = grade.status
    elif grade.verdict is not None:
        status = status_for(grade.verdict)
    raw = next((o.raw_request for o in outcomes if o.raw_request is not None), None)
    result = TurnResult(
        turn=number,
        status=status,
        score=grade.score,
        verdict=grade.verdict,
        question=question,
        candidate_answer=answer,
        hits=grade.hits,
        misses=grade.misses,
        reasoning=grade.reasoning,
        evaluator_results=[outcome.result for outcome in outcomes],
        evaluator_raw_request=raw,
        error=grade.error,
    )
    return GradedTurn(result, grade)


def unanswered_turn(number: int, question: str) -> GradedTurn:
    """A regraded turn the earlier run never answered: an error of the case."""
    grade = Combined("error", None, None, error=UNANSWERED)
    result = TurnResult(turn=number, status="error", question=question, error=UNANSWERED)
    return GradedTurn(result, grade)


def failed(turn: GradedTurn) -> bool:
    """Whether the turn failed: its graders failed it, or could not grade it."""
    return turn.grade.status != "ok" or turn.grade.verdict == "fail"


def skipped_turn(number: int) -> TurnResult:
    """A turn not run because an earlier one failed (``on_turn_failure: stop``)."""
    return TurnResult(turn=number, status="skipped", score=0.0)


def combine_turns(
    conversation: Conversation,
    turns: Sequence[GradedTurn],
    overall: Combined | None,
    thresholds: Thresholds,
) -> Combined:
    """The case's grade from its turns' (and, if any, the whole conversation's).

    Turns not run count 0 and fail the case.
    """
    hits = [f"turn {t.result.turn}: {hit}" for t in turns for hit in t.grade.hits]
    misses = [f"turn {t.result.turn}: {miss}" for t in turns for miss in t.grade.misses]
    parts = [f"turn {t.result.turn}: {t.grade.reasoning}" for t in turns if t.grade.reasoning]
    if overall is not None:
        hits += overall.hits
        misses += overall.misses
        parts += [f"conversation: {overall.reasoning}"] if overall.reasoning else []
    reasoning = " | ".join(parts) or None
    named = [(f"turn {t.result.turn}", t.grade) for t in turns]
    named += [("conversation", overall)] if overall is not None else []
    for status in ("error", "judge_error"):
        broken = [f"{name}: {grade.error}" for name, grade in named if grade.status == status]
        if broken:
            return Combined(status, None, None, hits, misses, reasoning, error="; ".join(broken))
    scores = [grade.score or 0.0 for _, grade in named]
    scores += [0.0] * (len(conversation.turns) - len(turns))
    score = AGGREGATIONS[conversation.aggregation](scores)
    forces_fail = len(turns) < len(conversation.turns) or any(g.forces_fail for _, g in named)
    verdict = "fail" if forces_fail else verdict_for(score, thresholds)
    return Combined("ok", score, verdict, hits, misses, reasoning, forces_fail)


async def converse(
    state: CaseState,
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
                response = await ask_candidate(state, prompt, context, workspace)
            except ProviderError as exc:
                error = candidate_failure(plan, exc)
                state.turns.append(
                    TurnResult(turn=number, status="error", question=question, error=error)
                )
                raise
            answer = response.text
        await note_answer(state, answer, response, workspace)
        tool_calls.extend(state.candidate.tool_calls)
        outcomes = await grade(
            state, turn_case(case, turn), question, answer, context, registry, workspace
        )
        turn_grade = combine(outcomes, thresholds)
        graded.append(graded_turn(number, question, answer, turn_grade, outcomes))
        state.turns.append(graded[-1].result)
        history = answered(history, turn, answer)
        halted = conversation.on_turn_failure == "stop" and failed(graded[-1])
    state.candidate = replace(state.candidate, tool_calls=tuple(tool_calls))
    overall = None
    if case.evaluators and state.candidate_answer is not None:
        state.outcomes = await grade(
            state, case, question, state.candidate_answer, context, registry, workspace
        )
        overall = combine(state.outcomes, thresholds)
    return state.record(combine_turns(conversation, graded, overall, thresholds))
