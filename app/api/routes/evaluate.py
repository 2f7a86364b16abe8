"""``POST /evaluate``: run a suite inline; JSON reply, or NDJSON streamed as cases finish."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse

from app.api.body import DocumentBody
from app.api.dependencies import ServicesDep
from app.api.problems import problem_responses
from app.errors import ClientDisconnected
from app.schemas.evaluate import EvaluateRequest, EvaluateResponse, evaluate_examples
from app.schemas.suite_examples import QUICK_SUITE_YAML
from app.services.evaluate import collect_results, prepare_evaluation, stream_results

router = APIRouter(tags=["evaluate"])

NDJSON = "application/x-ndjson"
SUITE_QUERY_FIELDS = ("target", "judge_target", "max_concurrency", "allow_missing_files")
EVALUATE_BODY = DocumentBody(
    EvaluateRequest,
    examples=evaluate_examples(),
    yaml_field="suite",
    yaml_example=QUICK_SUITE_YAML,
    query_fields=SUITE_QUERY_FIELDS,
)
ERRORS = problem_responses(400, 413, 415, 422)
ResultT = TypeVar("ResultT")


def wants_ndjson(request: Request) -> bool:
    """Whether the client asked for NDJSON (``Accept: application/x-ndjson``)."""
    return NDJSON in request.headers.get("accept", "")


async def cancel_on_disconnect(request: Request, work: Awaitable[ResultT]) -> ResultT:
    """Await ``work``, cancelling it if the client disconnects first."""

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(watch())
    try:
        await asyncio.wait((task, watcher), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in (task, watcher):
            pending.cancel()
        await asyncio.gather(task, watcher, return_exceptions=True)
    if task.cancelled():
        raise ClientDisconnected("the client disconnected; the evaluation was cancelled")
    return task.result()


@router.post(
    "/evaluate",
    operation_id="evaluate",
    summary="Run a suite: the candidate answers, the evaluators grade",
    response_model=EvaluateResponse,
    response_model_by_alias=True,
    responses={
        **ERRORS,
        200: {
            "content": {
                NDJSON: {
                    "schema": {
                        "type": "string",
                        "description": "One ResultRecord per line as each case finishes, "
                        'then {"summary": RunSummary}.',
                    }
                }
            }
        },
    },
    openapi_extra=EVALUATE_BODY.openapi,
)
async def evaluate(
    request: Request,
    body: Annotated[EvaluateRequest, Depends(EVALUATE_BODY)],
    services: ServicesDep,
) -> EvaluateResponse | StreamingResponse:
    """Run every (or every selected) case of a suite and grade each answer.

    The body is JSON (`suite` as an object, YAML text or a workspace path, plus `files`,
    `target`, `judge_target`, `max_concurrency`, `case_ids`, `guideline_patterns`) or the
    eval file itself as `application/yaml`, the other fields then as query parameters.
    Answers `{summary, results}`; with `Accept: application/x-ndjson` it streams one result
    record per line as each case finishes, then `{"summary": ...}`. Suites over the inline
    limit get 413: run them with `POST /runs`. A client that disconnects cancels the run.
    """
    evaluation = await prepare_evaluation(body, services.settings, services.providers)
    if wants_ndjson(request):
        return StreamingResponse(stream_results(evaluation), media_type=NDJSON)
    return await cancel_on_disconnect(request, collect_results(evaluation))
