"""People reviewing results: verdicts set by hand beside the graders', and regression suites.

A review never changes the stored record; summaries (``RunService``), the viewer and
comparisons read it beside the graders' result.
"""

from __future__ import annotations

import json
from typing import Any

from app.errors import RunNotFound, RunStateConflict
from app.runs.models import Review
from app.runs.storage.store import RunStore
from app.runs.storage.store_base import utc_now
from app.schemas.reviews import ReviewedSuite, ReviewList, ReviewObject, ReviewRequest
from app.services.runs import RunService


class ReviewService:
    """Set, remove, list and export the reviews of a run's cases, for the run's owner."""

    def __init__(self, runs: RunService, store: RunStore) -> None:
        self._runs = runs
        self._store = store

    async def set(
        self, run_id: str, seq: int, request: ReviewRequest, caller: str | None = None
    ) -> ReviewObject:
        """Record the caller's verdict on case ``seq`` (replacing an earlier review)."""
        run = await self._runs.owned(run_id, caller)
        if not 0 <= seq < run.total:
            raise RunNotFound(f"run {run_id!r} has no case number {seq} (it has {run.total})")
        record = await self._store.result_at(run_id, seq)
        if record is None:
            raise RunStateConflict(
                f"case {seq} of run {run_id!r} has not run yet: nothing to review"
            )
        review = Review(
            seq=seq,
            verdict=request.verdict,
            score=request.score,
            comment=request.comment,
            reviewer=caller,
            reviewed_at=utc_now(),
        )
        await self._store.set_review(run_id, review)
        return _review_object(review, json.loads(record))

    async def delete(self, run_id: str, seq: int, caller: str | None = None) -> None:
        """Remove the review of case ``seq``: its graders decide again."""
        await self._runs.owned(run_id, caller)
        if not await self._store.delete_review(run_id, seq):
            raise RunNotFound(f"case {seq} of run {run_id!r} has no review")

    async def list(self, run_id: str, caller: str | None = None) -> ReviewList:
        """Every review of the run with what the graders said."""
        await self._runs.owned(run_id, caller)
        reviews = await self._store.reviews(run_id)
        shown = []
        for seq, review in reviews.items():
            record = await self._store.result_at(run_id, seq)
            shown.append(_review_object(review, json.loads(record) if record else {}))
        return ReviewList(reviews=shown)

    async def export(self, run_id: str, caller: str | None = None) -> ReviewedSuite:
        """The reviewed cases as an AgentV suite with the files they use, for re-running."""
        run = await self._runs.owned(run_id, caller)
        reviews = await self._store.reviews(run_id)
        cases = []
        for seq, review in reviews.items():
            stored = json.loads((await self._store.load_case(run_id, seq)).definition)
            record = await self._store.result_at(run_id, seq)
            answer = json.loads(record).get("candidate_answer") if record else None
            cases.append(_regression_case(stored["case"], review, answer))
        spec = await self._store.load_spec(run_id)
        name = f"{run.name or run_id} (reviewed)"
        suite = {"dataset": name, "evalcases": cases}
        return ReviewedSuite(suite=suite, files=dict(spec.get("files") or {}))


def _review_object(review: Review, record: dict[str, Any]) -> ReviewObject:
    return ReviewObject(
        seq=review.seq,
        eval_id=str(record.get("eval_id", "")),
        verdict=review.verdict,
        score=review.score,
        comment=review.comment,
        reviewer=review.reviewer,
        reviewed_at=review.reviewed_at,
        graded_status=record.get("status"),
        graded_score=record.get("score"),
    )


def _regression_case(case: dict[str, Any], review: Review, answer: str | None) -> dict[str, Any]:
    """One reviewed case as an AgentV case.

    It keeps its conversation; its expected outcome gains the reviewer's decision, and an
    answer the reviewer passed becomes its reference answer.
    """
    decided = f"A reviewer marked an earlier answer {review.verdict}"
    if review.comment:
        decided += f": {review.comment.strip()}"
    outcome = "\n\n".join(
        part for part in (case.get("expected_outcome", "").strip(), decided) if part
    )
    exported: dict[str, Any] = {
        "id": case["id"],
        "expected_outcome": outcome,
        "input_messages": case["input_messages"],
        "metadata": {"reviewed": {"verdict": review.verdict, "comment": review.comment}},
    }
    if review.verdict == "pass" and answer:
        exported["expected_messages"] = [{"role": "assistant", "content": answer}]
    return exported
