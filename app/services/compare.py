"""Two runs compared (``GET /runs/compare`` and the viewer's comparison page)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.errors import FieldError, InvalidRequest
from app.evaluation.arm_comparison import compare_arms
from app.evaluation.comparison import (
    AnswerPair,
    CaseOutcome,
    compare_cases,
    paired_difference,
)
from app.runs.reviewed import STATUS_OF_VERDICT
from app.schemas.compare import ArmsComparison, ComparisonCounts, RunComparison, RunSide
from app.schemas.runs import RunObject
from app.schemas.viewer import NumberedRecord
from app.services.runs import RunService


async def compare_runs(
    runs: RunService,
    base_id: str,
    head_id: str,
    caller: str | None = None,
    *,
    with_answers: bool = False,
    base_arm: str | None = None,
    head_arm: str | None = None,
) -> RunComparison:
    """``head`` against ``base`` on the case ids both have a record of.

    A run with arms is compared through one of its arms (``base_arm``/``head_arm``: its
    index or its target's name).

    Raises:
        RunNotFound: either run does not exist or is not the caller's.
        InvalidRequest: a run with arms and no arm named, or an arm it does not have.
    """
    base_run, head_run = await runs.get(base_id, caller), await runs.get(head_id, caller)
    base_index = pick_arm(base_run, base_arm, "base_arm")
    head_index = pick_arm(head_run, head_arm, "head_arm")
    base = await _records_by_case(runs, base_id, caller, base_index)
    head = await _records_by_case(runs, head_id, caller, head_index)
    shared = [eval_id for eval_id in head if eval_id in base]
    rows = compare_cases(
        {eval_id: _outcome(base[eval_id]) for eval_id in shared},
        {eval_id: _outcome(head[eval_id]) for eval_id in shared},
        shared,
    )
    if with_answers:
        for row in rows:
            row.answers = AnswerPair(
                base=base[row.eval_id].get("candidate_answer"),
                head=head[row.eval_id].get("candidate_answer"),
            )
    scored = [row for row in rows if row.score_delta is not None]
    difference = paired_difference(
        [row.base.score or 0.0 for row in scored], [row.head.score or 0.0 for row in scored]
    )
    counts = ComparisonCounts()
    for row in rows:
        setattr(counts, row.change, getattr(counts, row.change) + 1)
    base_side = _side(base_run, base, len(shared))
    head_side = _side(head_run, head, len(shared))
    return RunComparison(
        base=base_side,
        head=head_side,
        same_suite=len(base_side.datasets) == 1 and base_side.datasets == head_side.datasets,
        shared=len(shared),
        counts=counts,
        difference=difference,
        cases=rows,
    )


async def compare_run_arms(
    runs: RunService, run_id: str, caller: str | None = None
) -> ArmsComparison:
    """Every pair of the run's arms, with Holm-adjusted p-values and a verdict per pair.

    Raises:
        RunNotFound: the run does not exist or is not the caller's.
    """
    run = await runs.get(run_id, caller)
    arms = run.arms or []
    outcomes = arm_outcomes(await runs.numbered_records(run_id, caller))
    return ArmsComparison(run_id=run.id, arms=arms, pairs=compare_arms(arms, outcomes))


def arm_outcomes(rows: Sequence[NumberedRecord]) -> dict[int, dict[str, CaseOutcome]]:
    """Each case's outcome (as reviewed) on each arm: by arm index, then case id."""
    outcomes: dict[int, dict[str, CaseOutcome]] = {}
    for numbered in rows:
        record = numbered.record
        arm = (record.get("arm") or {}).get("index")
        if arm is not None:
            outcomes.setdefault(arm, {})[record["eval_id"]] = _outcome(record)
    return outcomes


def pick_arm(run: RunObject, arm: str | None, field: str) -> int | None:
    """The index of the run's arm ``arm`` names (its index or target); None for no arms.

    Raises:
        InvalidRequest: the run has arms and none is named, or it has no arm ``arm``.
    """
    if not run.arms:
        if arm is None:
            return None
        raise InvalidRequest(
            f"{field}: run {run.id!r} has no arms (it ran on one target), not {arm!r}",
            errors=[FieldError(path=field, message="the run has no arms")],
        )
    for candidate in run.arms:
        if arm in (str(candidate.index), candidate.target, candidate.label):
            return candidate.index
    named = ", ".join(f"{a.index} ({a.label})" for a in run.arms)
    raise InvalidRequest(
        f"{field}: run {run.id!r} has the arms {named}; "
        + ("name one" if arm is None else f"not {arm!r}"),
        errors=[FieldError(path=field, message=f"one of the run's arms: {named}")],
    )


async def _records_by_case(
    runs: RunService, run_id: str, caller: str | None, arm: int | None
) -> dict[str, dict[str, Any]]:
    """The run's records by case id (of one arm's, for a run with arms)."""
    return {
        numbered.record["eval_id"]: numbered.record
        for numbered in await runs.numbered_records(run_id, caller)
        if arm is None or (numbered.record.get("arm") or {}).get("index") == arm
    }


def _outcome(record: dict[str, Any]) -> CaseOutcome:
    """The case's outcome: a person's verdict (and score) where one reviewed it."""
    review = record.get("review")
    if review:
        score = review["score"] if review["score"] is not None else record.get("score")
        status = STATUS_OF_VERDICT[review["verdict"]]
        return CaseOutcome(status=status, score=score, verdict=review["verdict"])
    return CaseOutcome(
        status=record["status"], score=record.get("score"), verdict=record.get("verdict")
    )


def _side(run: RunObject, records: dict[str, dict[str, Any]], shared: int) -> RunSide:
    datasets = sorted({str(record.get("dataset", "")) for record in records.values()})
    return RunSide(
        id=run.id,
        status=run.status,
        target=run.target,
        datasets=datasets,
        cases=len(records),
        only_here=len(records) - shared,
    )
