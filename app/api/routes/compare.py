"""``GET /runs/compare``: two runs compared case by case, for CI jobs and the viewer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from app.api.middleware.auth import CallerDep
from app.api.problems import problem_responses
from app.api.routes.runs import RunsDep
from app.schemas.compare import ArmsComparison, RunComparison, comparison_example
from app.schemas.runs import SAMPLE_ARMS_RUN_ID, SAMPLE_RUN_ID
from app.services.compare import compare_run_arms, compare_runs

router = APIRouter(prefix="/runs", tags=["runs"])
_SAMPLE = {"sample_run": {"summary": "The sample run (against itself)", "value": SAMPLE_RUN_ID}}
ArmsRunId = Annotated[
    str,
    Path(
        description="The run's id (`id` of `POST /runs`; `Location` names it).",
        openapi_examples={
            "three_targets": {
                "summary": "The sample run a fresh server makes on its three mock targets",
                "value": SAMPLE_ARMS_RUN_ID,
            }
        },
    ),
]
BaseRun = Annotated[
    str, Query(description="The run compared against (before).", openapi_examples=_SAMPLE)
]
HeadRun = Annotated[str, Query(description="The run compared (after).", openapi_examples=_SAMPLE)]
ArmOf = Annotated[
    str | None,
    Query(description="For a run with arms: the arm compared (its index or target's name)."),
]


@router.get(
    "/compare",
    operation_id="compare_runs",
    summary="Compare two runs case by case, with a paired significance test",
    responses={
        **problem_responses(404, 422),
        200: {"content": {"application/json": {"example": comparison_example()}}},
    },
)
async def compare(
    base: BaseRun,
    head: HeadRun,
    runs: RunsDep,
    caller: CallerDep,
    base_arm: ArmOf = None,
    head_arm: ArmOf = None,
) -> RunComparison:
    """`head` against `base` on the case ids both runs have a record of.

    Cases come regressions first (worst first), then improvements, then unchanged. The
    `difference` pairs the scores of cases graded in both runs: mean of head minus base, its
    95% confidence interval and a paired t-test; fail a build when `significant` is true and
    `mean_difference` is negative. Runs of different suites compare on the ids they share;
    `only_here` counts the others. A run on several targets is compared through one of its
    arms: `base_arm`/`head_arm` (two arms of one run too: `base=head=<run>`).
    """
    return await compare_runs(runs, base, head, caller.id, base_arm=base_arm, head_arm=head_arm)


@router.get(
    "/{run_id}/compare",
    operation_id="compare_run_arms",
    summary="Compare every pair of a run's arms, with Holm's correction",
    responses=problem_responses(404),
)
async def compare_arms(run_id: ArmsRunId, runs: RunsDep, caller: CallerDep) -> ArmsComparison:
    """Each pair of the run's arms (target x prompt) on the cases both have a record of.

    The paired t-test of `/runs/compare` per pair; the p-values are adjusted for the
    number of pairs (Holm), and `verdict`/`summary` say which arm scored higher when the
    adjusted p < 0.05. A run on one target has no arms and no pairs.
    """
    return await compare_run_arms(runs, run_id, caller.id)
