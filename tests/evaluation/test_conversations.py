"""How a live conversation's turns make one grade (``combine_turns``), for any turn scores."""

from __future__ import annotations

from collections.abc import Callable
from statistics import fmean
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.evaluation.conversations import GradedTurn, combine_turns, graded_turn
from app.evaluation.known_answers import KnownAnswer
from app.evaluation.orchestrator import evaluate_case
from app.evaluators.aggregate import Combined
from app.evaluators.config import DEFAULT_EVALUATOR, EvaluatorConfig
from app.evaluators.verdicts import Thresholds, verdict_for
from app.formatting.messages import Message
from app.suites.model import Conversation, ConversationTurn, EvalCase, TurnAggregation
from tests.evaluation.test_orchestrator import context_with, formatted, plan_for
from tests.evaluators.fakes import ScriptedTarget

THRESHOLDS = Thresholds()
TURN = ConversationTurn(
    input_messages=(Message(role="user", content="Hi"),), evaluators=(DEFAULT_EVALUATOR,)
)
AGGREGATE: dict[str, Callable[[list[float]], float]] = {"mean": fmean, "min": min, "max": max}
AGGREGATIONS: tuple[TurnAggregation, ...] = ("mean", "min", "max")
scores = st.floats(min_value=0, max_value=1, allow_nan=False)


def conversation(turns: int, aggregation: TurnAggregation = "mean") -> Conversation:
    return Conversation(turns=(TURN,) * turns, aggregation=aggregation, on_turn_failure="stop")


def grade(score: float, *, forces_fail: bool = False) -> Combined:
    verdict = "fail" if forces_fail else verdict_for(score, THRESHOLDS)
    return Combined("ok", score, verdict, ["hit"], ["miss"], "fine", forces_fail)


def turn(number: int, combined: Combined) -> GradedTurn:
    return graded_turn(number, f"question {number}", f"answer {number}", combined, ())


@given(
    turn_scores=st.lists(scores, min_size=1, max_size=8),
    whole=st.none() | scores,
    aggregation=st.sampled_from(["mean", "min", "max"]),
)
def test_the_score_is_the_aggregation_of_every_turn_and_the_whole_conversation(
    turn_scores: list[float], whole: float | None, aggregation: TurnAggregation
) -> None:
    turns = [turn(n, grade(s)) for n, s in enumerate(turn_scores, start=1)]
    overall = grade(whole) if whole is not None else None
    combined = combine_turns(conversation(len(turns), aggregation), turns, overall, THRESHOLDS)

    items = [*turn_scores, *([whole] if whole is not None else [])]
    assert combined.status == "ok"
    assert combined.score == pytest.approx(AGGREGATE[aggregation](items))
    assert combined.verdict == verdict_for(combined.score or 0.0, THRESHOLDS)
    assert combined.hits[: len(turns)] == [f"turn {n}: hit" for n in range(1, len(turns) + 1)]


@given(run=st.lists(st.just(1.0), min_size=1, max_size=5), left=st.integers(1, 5))
def test_turns_not_run_score_zero_and_fail_the_case_whatever_the_aggregation(
    run: list[float], left: int
) -> None:
    turns = [turn(n, grade(s)) for n, s in enumerate(run, start=1)]
    for aggregation in AGGREGATIONS:
        whole = conversation(len(run) + left, aggregation)
        combined = combine_turns(whole, turns, None, THRESHOLDS)
        assert combined.verdict == "fail"
        expected = AGGREGATE[aggregation]([*run, *[0.0] * left])
        assert combined.score == pytest.approx(expected)


@pytest.mark.parametrize("status", ["error", "judge_error"])
def test_a_turn_that_could_not_be_graded_makes_the_case_so_naming_the_turn(
    status: Literal["error", "judge_error"],
) -> None:
    broken = Combined(status, None, None, error="no verdict in the reply")
    turns = [turn(1, grade(1.0)), turn(2, broken)]
    combined = combine_turns(conversation(2), turns, grade(1.0), THRESHOLDS)
    assert (combined.status, combined.score) == (status, None)
    assert combined.error == "turn 2: no verdict in the reply"
    assert turns[1].result.status == status


def test_an_unmet_required_rubric_in_any_turn_fails_the_case() -> None:
    turns = [turn(1, grade(1.0)), turn(2, grade(0.9, forces_fail=True))]
    combined = combine_turns(conversation(2, "max"), turns, None, THRESHOLDS)
    assert (combined.score, combined.verdict) == (1.0, "fail")


async def test_a_regrade_grades_the_stored_turns_and_errs_where_the_earlier_run_stopped() -> None:
    contains = EvaluatorConfig(name="has-a", type="contains", value="a")
    turns = tuple(
        ConversationTurn(input_messages=(Message(role="user", content=t),), evaluators=(contains,))
        for t in ("first", "second", "third")
    )
    case = EvalCase(
        id="chat",
        expected_outcome="",
        input_messages=(),
        conversation=Conversation(turns=turns),
    )
    target = ScriptedTarget()
    known = KnownAnswer("an answer", turns=("an answer", None), file_changes="diff --git a/x b/x")
    record = await evaluate_case(formatted(case), plan_for(), context_with(target), known=known)

    assert target.requests == []  # nothing is asked again
    assert [t.status for t in record.turns or []] == ["passed", "error", "skipped"]
    assert record.turns is not None
    question = "@[User]:\nfirst\n\n@[Assistant]:\nan answer\n\n@[User]:\nsecond"
    assert record.turns[1].question == question
    assert record.status == "error"
    assert record.error is not None
    assert record.error.startswith("turn 2: no stored answer to grade again")
    assert record.file_changes == "diff --git a/x b/x"
