"""``/v1/evals``: evals, their runs and the runs' output items (OpenAI's Evals API)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, Header, Path, Query, Request

from app.api.body import text_json_body
from app.api.dependencies import ServicesDep
from app.api.middleware.auth import CallerDep
from app.api.openai_evals.errors import openai_responses
from app.schemas.openai_evals import (
    EvalCreateRequest,
    EvalDeleted,
    EvalObject,
    EvalRunDeleted,
    EvalRunObject,
    EvalUpdateRequest,
    ListPage,
    OutputItem,
    RunCreateRequest,
    RunStatus,
)
from app.schemas.openai_examples import (
    EVAL_EXAMPLE,
    RUN_EXAMPLES,
    SAMPLE_EVAL_ID,
    SAMPLE_EVAL_RUN_ID,
    UPDATE_EXAMPLE,
)
from app.services.openai_evals import OpenAIEvalService
from app.services.openai_views import output_item_id

SAMPLE_SUMMARY = "The sample a fresh server creates on the mock target"

router = APIRouter(
    prefix="/v1/evals",
    tags=["openai-evals"],
    # The service's own JSON reader too: NaN/Infinity, lone surrogates and deep nesting are
    # refused by name, as in every other body (FastAPI's reader takes the first two).
    dependencies=[Depends(text_json_body)],
)


async def get_service(services: ServicesDep) -> OpenAIEvalService:
    """The OpenAI Evals service."""
    return services.openai_evals


EvalsDep = Annotated[OpenAIEvalService, Depends(get_service)]
EvalId = Annotated[
    str,
    Path(
        max_length=100,
        description="The eval's id (`eval_...`).",
        openapi_examples={"sample": {"summary": SAMPLE_SUMMARY, "value": SAMPLE_EVAL_ID}},
    ),
]
RunId = Annotated[
    str,
    Path(
        max_length=100,
        description="The run's id (`evalrun_...`).",
        openapi_examples={"sample": {"summary": SAMPLE_SUMMARY, "value": SAMPLE_EVAL_RUN_ID}},
    ),
]
ItemId = Annotated[
    str,
    Path(
        max_length=200,
        description="The output item's id (`outputitem_...`).",
        openapi_examples={
            "sample": {
                "summary": "The first item of the sample run",
                "value": output_item_id(SAMPLE_EVAL_RUN_ID, 0),
            }
        },
    ),
]
EvalBody = Annotated[
    EvalCreateRequest,
    Body(openapi_examples={"custom": {"summary": "Items and two graders", "value": EVAL_EXAMPLE}}),
]
UpdateBody = Annotated[
    EvalUpdateRequest,
    Body(
        openapi_examples={"rename": {"summary": "New name and metadata", "value": UPDATE_EXAMPLE}}
    ),
]
RunBody = Annotated[RunCreateRequest, Body(openapi_examples=RUN_EXAMPLES)]
After = Annotated[str | None, Query(max_length=200, description="`last_id` of the previous page.")]
Limit = Annotated[int, Query(ge=1, le=100, description="Page size.")]
Order = Annotated[Literal["asc", "desc"], Query(description="By creation time.")]
ERRORS = openai_responses(400, 404)


def _base(request: Request) -> str:
    return str(request.base_url)


@router.post(
    "",
    operation_id="openai_create_eval",
    summary="Create an eval",
    responses=ERRORS,
    status_code=201,
)
async def create_eval(body: EvalBody, evals: EvalsDep, caller: CallerDep) -> EvalObject:
    """Store an eval: the items' schema and the testing criteria each item is graded by."""
    return await evals.create_eval(body, caller.id)


@router.get("", operation_id="openai_list_evals", summary="List evals", responses=ERRORS)
async def list_evals(
    evals: EvalsDep,
    caller: CallerDep,
    after: After = None,
    limit: Limit = 20,
    order: Order = "asc",
    order_by: Annotated[Literal["created_at", "updated_at"], Query()] = "created_at",
) -> ListPage[EvalObject]:
    """One page of evals; pass `last_id` as `after` while `has_more`."""
    return await evals.list_evals(
        caller.id, after=after, limit=limit, order=order, order_by=order_by
    )


@router.get("/{eval_id}", operation_id="openai_get_eval", summary="An eval", responses=ERRORS)
async def get_eval(eval_id: EvalId, evals: EvalsDep, caller: CallerDep) -> EvalObject:
    """The eval."""
    return await evals.get_eval(eval_id, caller.id)


@router.post(
    "/{eval_id}", operation_id="openai_update_eval", summary="Update an eval", responses=ERRORS
)
async def update_eval(
    eval_id: EvalId, body: UpdateBody, evals: EvalsDep, caller: CallerDep
) -> EvalObject:
    """Rename the eval or replace its metadata."""
    return await evals.update_eval(eval_id, body, caller.id)


@router.delete(
    "/{eval_id}", operation_id="openai_delete_eval", summary="Delete an eval", responses=ERRORS
)
async def delete_eval(eval_id: EvalId, evals: EvalsDep, caller: CallerDep) -> EvalDeleted:
    """Remove the eval and its runs (running ones are cancelled first)."""
    return await evals.delete_eval(eval_id, caller.id)


@router.post(
    "/{eval_id}/runs",
    operation_id="openai_create_run",
    summary="Start a run",
    responses=openai_responses(400, 404, 409),
    status_code=201,
)
async def create_run(
    eval_id: EvalId,
    body: RunBody,
    request: Request,
    evals: EvalsDep,
    caller: CallerDep,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            max_length=200,
            description="Replaying the same key and body gives back the same run; another "
            "body with the key is a 409.",
        ),
    ] = None,
) -> EvalRunObject:
    """Grade the data source's items (asking `model` first for `completions`), in the background."""
    return await evals.create_run(eval_id, body, caller.id, _base(request), idempotency_key)


@router.get(
    "/{eval_id}/runs", operation_id="openai_list_runs", summary="List runs", responses=ERRORS
)
async def list_runs(
    eval_id: EvalId,
    request: Request,
    evals: EvalsDep,
    caller: CallerDep,
    after: After = None,
    limit: Limit = 20,
    order: Order = "asc",
    status: Annotated[RunStatus | None, Query()] = None,
) -> ListPage[EvalRunObject]:
    """One page of the eval's runs."""
    return await evals.list_runs(
        eval_id,
        caller.id,
        status=status,
        after=after,
        limit=limit,
        order=order,
        base_url=_base(request),
    )


@router.get(
    "/{eval_id}/runs/{run_id}", operation_id="openai_get_run", summary="A run", responses=ERRORS
)
async def get_run(
    eval_id: EvalId, run_id: RunId, request: Request, evals: EvalsDep, caller: CallerDep
) -> EvalRunObject:
    """The run, with counts of the items graded so far."""
    return await evals.get_run(eval_id, run_id, caller.id, _base(request))


@router.post(
    "/{eval_id}/runs/{run_id}",
    operation_id="openai_cancel_run",
    summary="Cancel a run",
    responses=ERRORS,
)
@router.post(
    "/{eval_id}/runs/{run_id}/cancel",
    operation_id="openai_cancel_run_path",
    summary="Cancel a run (the SDK's path)",
    responses=ERRORS,
)
async def cancel_run(
    eval_id: EvalId, run_id: RunId, request: Request, evals: EvalsDep, caller: CallerDep
) -> EvalRunObject:
    """Stop the run; items already graded are kept."""
    return await evals.cancel_run(eval_id, run_id, caller.id, _base(request))


@router.delete(
    "/{eval_id}/runs/{run_id}",
    operation_id="openai_delete_run",
    summary="Delete a run",
    responses=ERRORS,
)
async def delete_run(
    eval_id: EvalId, run_id: RunId, evals: EvalsDep, caller: CallerDep
) -> EvalRunDeleted:
    """Remove the run and its items (cancelled first if running)."""
    return await evals.delete_run(eval_id, run_id, caller.id)


@router.get(
    "/{eval_id}/runs/{run_id}/output_items",
    operation_id="openai_list_output_items",
    summary="List a run's output items",
    responses=ERRORS,
)
async def list_output_items(
    eval_id: EvalId,
    run_id: RunId,
    evals: EvalsDep,
    caller: CallerDep,
    after: After = None,
    limit: Limit = 20,
    order: Order = "asc",
    status: Annotated[Literal["pass", "fail", "error"] | None, Query()] = None,
) -> ListPage[OutputItem]:
    """One page of the graded items (only `pass`, `fail` or `error` ones, if asked)."""
    return await evals.list_output_items(
        eval_id, run_id, caller.id, status=status, after=after, limit=limit, order=order
    )


@router.get(
    "/{eval_id}/runs/{run_id}/output_items/{output_item_id}",
    operation_id="openai_get_output_item",
    summary="An output item",
    responses=ERRORS,
)
async def get_output_item(
    eval_id: EvalId,
    run_id: RunId,
    output_item_id: ItemId,
    evals: EvalsDep,
    caller: CallerDep,
) -> OutputItem:
    """One graded item: its data, the sample and each criterion's result."""
    return await evals.get_output_item(eval_id, run_id, output_item_id, caller.id)
