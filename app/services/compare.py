"""Two runs compared (``GET /runs/compare`` and the viewer's comparison page)."""

from __future__ import annotations

from typing import Any

from app.evaluation.comparison import (
    AnswerPair,
    CaseOutcome,
    compare_cases,
    paired_difference,
)
from app.runs.reviewed import STATUS_OF_VERDICT
from app.schemas.compare import ComparisonCounts, RunComparison, RunSide
from app.schemas.runs import RunObject
from app.services.runs import RunService


async def compare_runs(
    runs: RunService,
    base_id: str,
    head_id: str,
    caller: str | None = None,
    *,
    with_answers: bool = False,
) -> RunComparison:
    """``head`` against ``base`` on the case ids both have a record of.

    Raises:
        RunNotFound: either run does not exist or is not the caller's.
    """
    base_run, head_run = await runs.get(base_id, caller), await runs.get(head_id, caller)
    base = {r.record["eval_id"]: r.record for r in await runs.numbered_records(base_id, caller)}
    head = {r.record["eval_id"]: r.record for r in await runs.numbered_records(head_id, caller)}
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
