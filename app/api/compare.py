"""``GET /runs/compare``: two runs compared case by case, for CI jobs and the viewer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.auth import CallerDep
from app.api.problems import problem_responses
from app.api.runs import RunsDep
from app.schemas.compare import RunComparison, comparison_example
from app.schemas.runs import SAMPLE_RUN_ID
from app.services.compare import compare_runs

router = APIRouter(prefix="/runs", tags=["runs"])
_SAMPLE = {"sample_run": {"summary": "The sample run (against itself)", "value": SAMPLE_RUN_ID}}
BaseRun = Annotated[
    str, Query(description="The run compared against (before).", openapi_examples=_SAMPLE)
]
HeadRun = Annotated[str, Query(description="The run compared (after).", openapi_examples=_SAMPLE)]


@router.get(
    "/compare",
    operation_id="compare_runs",
    summary="Compare two runs case by case, with a paired significance test",
    responses={
        **problem_responses(404, 422),
        200: {"content": {"application/json": {"example": comparison_example()}}},
    },
)
async def compare(base: BaseRun, head: HeadRun, runs: RunsDep, caller: CallerDep) -> RunComparison:
    """`head` against `base` on the case ids both runs have a record of.

    Cases come regressions first (worst first), then improvements, then unchanged. The
    `difference` pairs the scores of cases graded in both runs: mean of head minus base, its
    95% confidence interval and a paired t-test; fail a build when `significant` is true and
    `mean_difference` is negative. Runs of different suites compare on the ids they share;
    `only_here` counts the others.
    """
    return await compare_runs(runs, base, head, caller.id)
