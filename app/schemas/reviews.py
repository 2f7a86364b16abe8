"""People's verdicts on cases: what a reviewer sends and what the API shows."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ReviewVerdict = Literal["pass", "borderline", "fail"]


class ReviewRequest(BaseModel):
    """A person's verdict on one case, with an optional score and comment."""

    model_config = ConfigDict(extra="forbid")
    verdict: ReviewVerdict = Field(examples=["fail"])
    score: float | None = Field(
        None,
        ge=0,
        le=1,
        description="The person's score (none: the graders' stays).",
        examples=[0.2],
    )
    comment: str | None = Field(
        None, max_length=10_000, examples=["Promises a refund the policy does not allow."]
    )


class ReviewObject(BaseModel):
    """A case's review beside what its graders said."""

    seq: int = Field(examples=[0])
    eval_id: str = Field(examples=["refund-outside-window"])
    verdict: ReviewVerdict
    score: float | None = None
    comment: str | None = None
    reviewer: str | None = Field(None, description="The key that set it (none with keys off).")
    reviewed_at: datetime
    graded_status: str | None = Field(None, description="The graders' status of the case.")
    graded_score: float | None = Field(None, description="The graders' score of the case.")


class ReviewList(BaseModel):
    """Every review of a run, in case order."""

    reviews: list[ReviewObject]


class ReviewedSuite(BaseModel):
    """The reviewed cases as a suite: post it to `/evaluate` or `/runs` as it is.

    Each case keeps its conversation; its expected outcome says what the reviewer decided
    (and why), and an answer a reviewer passed becomes its reference answer.
    """

    suite: dict[str, Any]
    files: dict[str, str] = Field(default_factory=dict)
