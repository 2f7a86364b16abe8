"""People's verdicts on cases (``reviews``): set, removed, read, carried over to regrades.

A review never changes the stored record: the graders' result stays as it was, and readers
put the person's verdict beside it (``app.runs.reviewed``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, insert, select

from app.runs.models import Review
from app.runs.storage.store_base import StoreBase, aware
from app.runs.tables import ResultRow, ReviewRow

ReviewedOutcome = tuple[Review, str, float | None, str | None, int | None]
"""A review with its case's stored (status, score, ``graders`` column)."""


def _review(row: ReviewRow) -> Review:
    reviewed_at = aware(row.reviewed_at)
    assert reviewed_at is not None
    return Review(
        seq=row.seq,
        verdict=row.verdict,
        score=row.score,
        comment=row.comment,
        reviewer=row.reviewer,
        reviewed_at=reviewed_at,
    )


class ReviewsStore(StoreBase):
    """The ``reviews`` table."""

    async def set_review(self, run_id: str, review: Review) -> None:
        """Store ``review`` for its case, replacing an earlier one."""
        async with self._writing() as session:
            await session.execute(
                delete(ReviewRow).where(ReviewRow.run_id == run_id, ReviewRow.seq == review.seq)
            )
            await session.execute(
                insert(ReviewRow).values(
                    run_id=run_id,
                    seq=review.seq,
                    verdict=review.verdict,
                    score=review.score,
                    comment=review.comment,
                    reviewer=review.reviewer,
                    reviewed_at=review.reviewed_at,
                )
            )

    async def delete_review(self, run_id: str, seq: int) -> bool:
        """Remove the review of case ``seq``; whether there was one."""
        async with self._writing() as session:
            removed = await session.execute(
                delete(ReviewRow).where(ReviewRow.run_id == run_id, ReviewRow.seq == seq)
            )
        return bool(getattr(removed, "rowcount", 0))

    async def reviews(self, run_id: str) -> dict[int, Review]:
        """Every review of the run, by case number."""
        query = select(ReviewRow).where(ReviewRow.run_id == run_id).order_by(ReviewRow.seq)
        async with self._session() as session:
            rows = (await session.execute(query)).scalars().all()
        return {row.seq: _review(row) for row in rows}

    async def review_counts(self, run_ids: Sequence[str]) -> dict[str, int]:
        """How many cases of each run have a review (runs without any are left out)."""
        if not run_ids:
            return {}
        query = (
            select(ReviewRow.run_id, func.count())
            .where(ReviewRow.run_id.in_(run_ids))
            .group_by(ReviewRow.run_id)
        )
        async with self._session() as session:
            rows = (await session.execute(query)).all()
        return {run_id: int(count) for run_id, count in rows}

    async def reviewed_outcomes(self, run_id: str) -> list[ReviewedOutcome]:
        """Each review of the run with what its case's stored result says (and its arm)."""
        query = (
            select(ReviewRow, ResultRow.status, ResultRow.score, ResultRow.graders, ResultRow.arm)
            .join(
                ResultRow,
                (ResultRow.run_id == ReviewRow.run_id) & (ResultRow.case_seq == ReviewRow.seq),
            )
            .where(ReviewRow.run_id == run_id)
        )
        async with self._session() as session:
            rows = (await session.execute(query)).all()
        return [
            (_review(row), status, score, graders, arm) for row, status, score, graders, arm in rows
        ]

    async def copy_reviews(self, source_run_id: str, run_id: str) -> int:
        """Give ``run_id`` (a regrade) the reviews of the run it grades again."""
        reviews = await self.reviews(source_run_id)
        if not reviews:
            return 0
        async with self._writing() as session:
            await session.execute(
                insert(ReviewRow),
                [
                    {
                        "run_id": run_id,
                        "seq": review.seq,
                        "verdict": review.verdict,
                        "score": review.score,
                        "comment": review.comment,
                        "reviewer": review.reviewer,
                        "reviewed_at": review.reviewed_at,
                    }
                    for review in reviews.values()
                ],
            )
        return len(reviews)
