"""``POST /evaluate``: run a suite inline; JSON reply, or NDJSON streamed as cases finish."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from app.api.body import body_openapi, is_yaml, read_document, validate_document
from app.api.dependencies import ServicesDep
from app.api.problems import Problem
from app.errors import BadRequest, ServiceError
from app.evaluation.service import (
    collect_results,
    open_inline_targets,
    prepare_evaluation,
    stream_results,
)
from app.schemas.evaluate import EvaluateRequest, EvaluateResponse, evaluate_examples
from app.schemas.suite_examples import CUSTOMER_SUPPORT_SUITE

router = APIRouter(tags=["evaluate"])

NDJSON = "application/x-ndjson"
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": Problem} for code in (400, 413, 415, 422)
}
QUERY_LISTS = ("case_ids", "guideline_patterns")
QUERY_VALUES = ("target", "judge_target", "max_concurrency", "allow_missing_files")
ResultT = TypeVar("ResultT")


class ClientDisconnected(ServiceError):
    """The client went away before the reply was ready; its work was cancelled."""

    status = 499
    slug = "client-closed-request"
    title = "Client closed the request"


def suite_body_openapi(
    model: type[BaseModel], examples: dict[str, Any], values: tuple[str, ...]
) -> dict[str, Any]:
    """A JSON body of ``model``, or the eval file as YAML with ``values`` as query params."""
    extra = body_openapi(model, examples)
    extra["requestBody"]["content"]["application/yaml"] = {
        "schema": {"type": "string", "description": "The eval file itself (YAML)."},
        "example": CUSTOMER_SUPPORT_SUITE,
    }
    extra["parameters"] = [
        {
            "name": name,
            "in": "query",
            "required": False,
            "description": f"With a YAML body: the request's `{name}`"
            + (" (repeat or comma-separate)." if name in QUERY_LISTS else "."),
            "schema": {"type": "array", "items": {"type": "string"}}
            if name in QUERY_LISTS
            else {"type": "string"},
        }
        for name in (*values, *QUERY_LISTS)
    ]
    return extra


async def read_evaluate_request(request: Request) -> EvaluateRequest:
    """JSON ``{suite, ...}``, or the eval file as YAML with the other fields as query params."""
    if not is_yaml(request):
        return validate_document(EvaluateRequest, await read_document(request))
    try:
        text = (await request.body()).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest("the body is not UTF-8 text") from exc
    query = request.query_params
    fields: dict[str, Any] = {name: query[name] for name in QUERY_VALUES if name in query}
    for name in QUERY_LISTS:
        values = [part.strip() for item in query.getlist(name) for part in item.split(",")]
        if values:
            fields[name] = [value for value in values if value]
    return validate_document(EvaluateRequest, {"suite": text, **fields})


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
    openapi_extra=suite_body_openapi(EvaluateRequest, evaluate_examples(), QUERY_VALUES),
)
async def evaluate(request: Request, services: ServicesDep) -> EvaluateResponse | StreamingResponse:
    """Run every (or every selected) case of a suite and grade each answer.

    The body is JSON (`suite` as an object, YAML text or a workspace path, plus `files`,
    `target`, `judge_target`, `max_concurrency`, `case_ids`, `guideline_patterns`) or the
    eval file itself as `application/yaml`, the other fields then as query parameters.
    Answers `{summary, results}`; with `Accept: application/x-ndjson` it streams one result
    record per line as each case finishes, then `{"summary": ...}`. Suites over the inline
    limit get 413: run them with `POST /runs`. A client that disconnects cancels the run.
    """
    body = await read_evaluate_request(request)
    inline = open_inline_targets(body.targets, services.settings, services.providers)
    run = await prepare_evaluation(body, services.settings, services.providers, inline)
    if NDJSON in request.headers.get("accept", ""):
        return StreamingResponse(stream_results(run), media_type=NDJSON)
    return await cancel_on_disconnect(request, collect_results(run))
