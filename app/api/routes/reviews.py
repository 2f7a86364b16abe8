"""``/runs/{run_id}/.../review``: people's verdicts on cases, and the reviewed cases as a suite."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Path, Response

from app.api.dependencies import ServicesDep
from app.api.middleware.auth import CallerDep
from app.api.openapi_docs.run_docs import RunId
from app.api.problems import problem_responses
from app.schemas.reviews import ReviewedSuite, ReviewList, ReviewObject, ReviewRequest
from app.services.reviews import ReviewService

router = APIRouter(prefix="/runs", tags=["reviews"])
CaseSeq = Annotated[
    int,
    Path(
        ge=0,
        le=2**31 - 1,  # the column is a 32-bit INTEGER: a larger number is no case of the run
        description="The case's number in the run (from 0).",
        openapi_examples={"first": {"summary": "The run's first case", "value": 0}},
    ),
]


async def get_review_service(services: ServicesDep) -> ReviewService:
    """Reviews of the durable runs."""
    return ReviewService(services.runs, services.store)


ReviewsDep = Annotated[ReviewService, Depends(get_review_service)]
REVIEW_EXAMPLES = {
    "fail_with_comment": {
        "summary": "Overrule the graders: a fail, with why",
        "value": {"verdict": "fail", "score": 0.2, "comment": "Promises a refund it cannot give."},
    },
    "pass": {"summary": "A pass, the graders' score kept", "value": {"verdict": "pass"}},
}


@router.put(
    "/{run_id}/cases/{seq}/review",
    operation_id="review_case",
    summary="Set a person's verdict on a case",
    responses=problem_responses(404, 409, 422),
)
async def review_case(
    run_id: RunId,
    seq: CaseSeq,
    review: Annotated[ReviewRequest, Body(openapi_examples=REVIEW_EXAMPLES)],
    reviews: ReviewsDep,
    caller: CallerDep,
) -> ReviewObject:
    """A person's verdict (and score, comment) on a case that has run.

    It wins over the graders' in the run's summary, the viewer and comparisons; the record
    keeps what the graders said, beside it.
    """
    return await reviews.set(run_id, seq, review, caller.id)


@router.delete(
    "/{run_id}/cases/{seq}/review",
    operation_id="delete_case_review",
    summary="Remove a person's verdict on a case",
    status_code=204,
    response_class=Response,
    responses=problem_responses(404),
)
async def delete_case_review(
    run_id: RunId, seq: CaseSeq, reviews: ReviewsDep, caller: CallerDep
) -> None:
    """The graders decide the case again."""
    await reviews.delete(run_id, seq, caller.id)


@router.get(
    "/{run_id}/reviews",
    operation_id="list_reviews",
    summary="List a run's reviewed cases",
    responses=problem_responses(404),
)
async def list_reviews(run_id: RunId, reviews: ReviewsDep, caller: CallerDep) -> ReviewList:
    """Each review with the graders' status and score of its case."""
    return await reviews.list(run_id, caller.id)


@router.get(
    "/{run_id}/reviews/suite",
    operation_id="export_reviewed_suite",
    summary="Export the reviewed cases as a suite",
    responses=problem_responses(404),
)
async def export_reviewed_suite(
    run_id: RunId, reviews: ReviewsDep, caller: CallerDep
) -> ReviewedSuite:
    """The reviewed cases as regression cases: `POST` the reply to `/evaluate` or `/runs`."""
    return await reviews.export(run_id, caller.id)
