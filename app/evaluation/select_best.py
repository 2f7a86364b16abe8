"""promptfoo's ``select-best`` settled once every arm of a test has answered.

For each select-best grader of a test, one judge call lists the arms' answers as
``<Text index=i>`` (in arm order) under the grader's criterion; the first whole number in
the reply names the best answer, which scores 1 and passes, every other arm's 0 (measured
against promptfoo 0.123.1). A reply naming no answer fails them all; a failed judge call
leaves a ``judge_error``. Each arm's record is then graded again from its stored grader
results. Settling is idempotent: a record whose select-best results are settled is left
alone, so a run killed while settling settles the rest when it resumes. The comparison's
calls are shared among the records it settled (``app.evaluation.shared_calls``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from app.evaluation.context import CallLedger, RecordedTarget, RunnableTarget
from app.evaluation.prepared import PreparedRun
from app.evaluation.records import ResultRecord
from app.evaluation.shared_calls import with_shares
from app.evaluators.aggregate import combine
from app.evaluators.base import EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.judges.max_score import arm_score, selected
from app.evaluators.judges.select_best import COMPARED, MAX_SCORE, SELECT_BEST, is_pending
from app.evaluators.results import EvaluatorResult
from app.evaluators.verdicts import Thresholds, status_for
from app.formatting.messages import ChatMessage
from app.providers.base import CallRole, ProviderRequest
from app.providers.errors import ProviderError
from app.suites.model import EvalCase

SYSTEM_PROMPT = (
    "You compare several answers written for the same request and pick the one that best "
    "meets the criterion you are given. Reply with the index number of that answer only."
)
_FIRST_NUMBER = re.compile(r"\d+")
JudgeClientFor = Callable[[EvaluatorConfig], RunnableTarget]
"""The judge a select-best grader calls (its own ``target``, else the run's judge)."""


def pending(record: ResultRecord) -> bool:
    """Whether the record waits for a select-best comparison."""
    return any(is_pending(result) for result in record.evaluator_results)


def select_best_graders(graders: Sequence[EvaluatorConfig]) -> list[EvaluatorConfig]:
    """The graders comparing the arms (select-best, max-score) among a case's graders."""
    return [grader for grader in graders if grader.type in COMPARED]


def comparison_prompt(criterion: str, answers: Sequence[str]) -> str:
    """The judge's question: the criterion, then each answer as ``<Text index=i>``."""
    texts = "\n".join(
        f"<Text index={index}>\n{answer}\n</Text>" for index, answer in enumerate(answers)
    )
    return (
        f"Criterion: {criterion}\n\nAnswers:\n{texts}\n\n"
        f"Which answer best meets the criterion? Reply with its index (0 to {len(answers) - 1})."
    )


def chosen_index(reply: str, count: int) -> int | None:
    """The answer the reply names: its first whole number, if it is an answer's index."""
    found = _FIRST_NUMBER.search(reply)
    index = int(found.group()) if found else None
    return index if index is not None and index < count else None


async def settle_case(
    records: Sequence[ResultRecord],
    graders: Sequence[EvaluatorConfig],
    judge_of: JudgeClientFor,
    thresholds: Thresholds,
) -> list[ResultRecord]:
    """The arms' records of one test (arm order) with their select-best results settled.

    Records with no answer (a failed candidate call) take no part and stay as they are.
    """
    taking_part = [record for record in records if pending(record)]
    if not taking_part:
        return list(records)
    results = {id(record): list(record.evaluator_results) for record in taking_part}
    answers = [record.candidate_answer or "" for record in taking_part]
    ledger = CallLedger()
    for grader in graders:
        if grader.type == MAX_SCORE:
            _settle_max_score(grader, [results[id(record)] for record in taking_part])
            continue
        criterion = str(grader.value or "")
        judge = RecordedTarget(judge_of(grader), CallRole.JUDGE, ledger)
        reply, problem = "", None
        question = comparison_prompt(criterion, answers)
        try:
            response = await judge.complete(
                ProviderRequest(
                    question=question,
                    chat_prompt=(
                        ChatMessage(role="system", content=SYSTEM_PROMPT),
                        ChatMessage(role="user", content=question),
                    ),
                    role=CallRole.JUDGE,
                    case_id=taking_part[0].eval_id,
                )
            )
            reply = response.text
        except ProviderError as exc:
            problem = f"the judge call failed: {exc.detail}"
        best = chosen_index(reply, len(answers))
        for position, record in enumerate(taking_part):
            own = results[id(record)]
            for index, result in enumerate(own):
                if result.name == grader.name and is_pending(result):
                    own[index] = _settled(result, position, best, len(answers), reply, problem)
                    break
    regraded = {
        id(record): share
        for record, share in zip(
            taking_part,
            with_shares(
                [_regraded(record, results[id(record)], thresholds) for record in taking_part],
                ledger,
            ),
            strict=True,
        )
    }
    return [regraded.get(id(record), record) for record in records]


def _settle_max_score(grader: EvaluatorConfig, arms: list[list[EvaluatorResult]]) -> None:
    """Settle ``grader`` (max-score) in each arm's results, in place."""
    value = grader.value if isinstance(grader.value, dict) else None
    scores = [
        arm_score([r for r in own if r.type not in COMPARED and r.status == "ok"], value)
        for own in arms
    ]
    threshold = value.get("threshold") if value else None
    best = selected(scores, threshold)
    for position, own in enumerate(arms):
        for index, result in enumerate(own):
            if result.name == grader.name and is_pending(result):
                won = best == position
                if won:
                    why = f"selected as the highest scoring answer (score {scores[position]:.3f})"
                elif best is None and scores:
                    why = f"none selected: the highest score is below the threshold {threshold}"
                else:
                    top = max(scores)
                    why = f"not selected (score {scores[position]:.3f}, highest {top:.3f})"
                own[index] = result.model_copy(
                    update={
                        "score": 1.0 if won else 0.0,
                        "passed": won,
                        "verdict": "pass" if won else "fail",
                        "reasoning": why,
                        "details": {MAX_SCORE: "settled", "index": position, "chosen": best},
                    }
                )
                break


def _settled(
    result: EvaluatorResult,
    position: int,
    best: int | None,
    count: int,
    reply: str,
    problem: str | None,
) -> EvaluatorResult:
    details = {SELECT_BEST: "settled", "index": position, "answers": count, "chosen": best}
    if problem is not None:
        return result.model_copy(
            update={"status": "judge_error", "reasoning": problem, "details": details}
        )
    won = best == position
    if best is None:
        why = f"the judge named none of the {count} answers"
    elif won:
        why = f"the judge chose this answer (index {position} of {count})"
    else:
        why = f"the judge chose answer {best} of {count}, not this one ({position})"
    return result.model_copy(
        update={
            "score": 1.0 if won else 0.0,
            "passed": won,
            "verdict": "pass" if won else "fail",
            "reasoning": why,
            "raw_output": reply,
            "details": details,
        }
    )


def _regraded(
    record: ResultRecord, results: list[EvaluatorResult], thresholds: Thresholds
) -> ResultRecord:
    """The record graded again from its grader results (each counted as stored)."""
    combined = combine([EvaluatorOutcome(result=result) for result in results], thresholds)
    status = combined.status if combined.status != "ok" else record.status
    if combined.status == "ok" and combined.verdict is not None:
        status = status_for(combined.verdict)
    return record.model_copy(
        update={
            "evaluator_results": results,
            "status": status,
            "score": combined.score,
            "verdict": combined.verdict,
            "hits": combined.hits,
            "misses": combined.misses,
            "reasoning": combined.reasoning,
            "error": combined.error,
        }
    )


async def settle_test(
    run: PreparedRun, records: Sequence[ResultRecord], case: EvalCase
) -> list[ResultRecord]:
    """The arms' records of ``case`` (arm order) settled with the run's judges."""
    return await settle_case(
        records,
        select_best_graders(case.all_graders()),
        lambda grader: run.context.providers.get(grader.target or run.plan.judge_target),
        case.thresholds or run.plan.thresholds,
    )
