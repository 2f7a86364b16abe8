"""``/runs``: durable evaluation runs that survive restarts, stream progress, resume and regrade."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response
from fastapi.responses import StreamingResponse
from sse_starlette import EventSourceResponse, ServerSentEvent

from app.api.body import LIST_QUERY_FIELDS, DocumentBody, text_json_body
from app.api.dependencies import ServicesDep, SettingsDep
from app.api.middleware.auth import CallerDep
from app.api.middleware.ratelimit import ensure_run_capacity
from app.api.openapi_docs.run_docs import (
    CREATE_RUN_REFUSALS,
    EVENT_STREAM_RESPONSE,
    NOT_FINISHED,
    RunId,
)
from app.api.problems import problem_responses
from app.api.routes.evaluate import SUITE_QUERY_FIELDS
from app.runs.models import StoredEvent
from app.schemas.runs import (
    NDJSON_MEDIA_TYPE,
    CaseStatusName,
    RegradeRequest,
    ResultPage,
    RunList,
    RunObject,
    RunPatch,
    RunRequest,
    RunStatusName,
    regrade_examples,
    run_examples,
)
from app.schemas.suite_examples import QUICK_SUITE_YAML
from app.services.runs import RunService

router = APIRouter(prefix="/runs", tags=["runs"])


async def get_run_service(services: ServicesDep) -> RunService:
    """The durable runs service."""
    return services.runs


RunsDep = Annotated[RunService, Depends(get_run_service)]
Limit = Annotated[int | None, Query(ge=1, le=1000, description="Page size.")]
Cursor = Annotated[str | None, Query(description="`next_cursor` of the previous page.")]


RUN_BODY = DocumentBody(
    RunRequest,
    examples=run_examples(),
    yaml_field="suite",
    yaml_example=QUICK_SUITE_YAML,
    query_fields=(*SUITE_QUERY_FIELDS, "cache"),
    list_fields=(*LIST_QUERY_FIELDS, "tags"),
)


async def server_sent_events(events: AsyncIterator[StoredEvent]) -> AsyncIterator[ServerSentEvent]:
    """SSE frames of stored events: ``id`` is the event's number, ``data`` its JSON payload."""
    async for event in events:
        yield ServerSentEvent(data=event.data, event=event.type, id=str(event.seq))


@router.post(
    "",
    operation_id="create_run",
    summary="Start a durable run of a suite",
    status_code=202,
    responses=CREATE_RUN_REFUSALS,
    openapi_extra=RUN_BODY.openapi,
)
async def create_run(
    body: Annotated[RunRequest, Depends(RUN_BODY)],
    response: Response,
    runs: RunsDep,
    caller: CallerDep,
    settings: SettingsDep,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            max_length=255,
            description="Same key and body: the same run; other body: 409.",
        ),
    ] = None,
) -> RunObject:
    """Store the run and its cases, start it in the background and answer at once (202).

    The body is the `/evaluate` body (JSON, or the eval file as `application/yaml` with the
    other fields as query parameters) plus `cache`. `Location` names the new run.
    """
    ensure_run_capacity(caller, await runs.runs_in_flight(caller.id), settings)
    run, _ = await runs.submit(body, idempotency_key, caller.id)
    response.headers["Location"] = f"/runs/{run.id}"
    return run


@router.get(
    "",
    operation_id="list_runs",
    summary="List runs, newest first",
    responses=problem_responses(422),
)
async def list_runs(
    runs: RunsDep,
    caller: CallerDep,
    status: Annotated[RunStatusName | None, Query(description="Only runs in this status.")] = None,
    tag: Annotated[
        str | None, Query(max_length=100, description="Only runs carrying this tag.")
    ] = None,
    name: Annotated[
        str | None,
        Query(max_length=500, description="Only runs of this name (their suite's or eval's)."),
    ] = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> RunList:
    """One page of runs, newest first; follow `next_cursor` for the next page.

    `?tag=main&name=customer-support&status=completed&limit=1` is the newest finished run of
    that suite tagged `main`: the base `evalx compare --base-from tag:main` compares with.
    """
    return await runs.list(
        status=status, limit=limit, cursor=cursor, caller=caller.id, tag=tag, name=name
    )


@router.get("/{run_id}", operation_id="get_run", summary="A run", responses=problem_responses(404))
async def get_run(run_id: RunId, runs: RunsDep, caller: CallerDep) -> RunObject:
    """The run, with its progress and the summary of the cases finished so far."""
    return await runs.get(run_id, caller.id)


@router.patch(
    "/{run_id}",
    operation_id="update_run",
    summary="Change a run's tags",
    responses=problem_responses(400, 404, 422),
    dependencies=[Depends(text_json_body)],
)
async def update_run(
    run_id: RunId,
    patch: Annotated[
        RunPatch,
        Body(
            openapi_examples={
                "tag": {"summary": "Tag a run as main's", "value": {"tags": ["main"]}},
                "untag": {"summary": "Remove every tag", "value": {"tags": []}},
            }
        ),
    ],
    runs: RunsDep,
    caller: CallerDep,
) -> RunObject:
    """Replace the run's tags (queued, running or finished alike); the run as it is now."""
    return await runs.update(run_id, patch, caller.id)


@router.get(
    "/{run_id}/results",
    operation_id="list_run_results",
    summary="A run's result records (JSON pages, or the whole run as JSONL)",
    response_model=ResultPage,
    responses={
        **problem_responses(404, 422),
        200: {
            "content": {
                NDJSON_MEDIA_TYPE: {
                    "schema": {
                        "type": "string",
                        "description": "With `Accept: application/x-ndjson`: one ResultRecord "
                        "per line, in case order.",
                    }
                }
            }
        },
    },
)
async def list_run_results(
    run_id: RunId,
    request: Request,
    runs: RunsDep,
    caller: CallerDep,
    status: Annotated[
        CaseStatusName | None, Query(description="Only cases with this status.")
    ] = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> ResultPage | StreamingResponse:
    """Records in case order, one page at a time.

    With `Accept: application/x-ndjson`: every record of the run, one JSON line each,
    streamed from the database.
    """
    if NDJSON_MEDIA_TYPE in request.headers.get("accept", ""):
        lines = await runs.export(run_id, status=status, caller=caller.id)
        return StreamingResponse(lines, media_type=NDJSON_MEDIA_TYPE)
    return await runs.results(run_id, status=status, limit=limit, cursor=cursor, caller=caller.id)


@router.get(
    "/{run_id}/events",
    operation_id="stream_run_events",
    summary="Follow a run as Server-Sent Events",
    response_class=EventSourceResponse,
    responses={**problem_responses(404), 200: EVENT_STREAM_RESPONSE},
)
async def stream_run_events(
    run_id: RunId,
    runs: RunsDep,
    caller: CallerDep,
    last_event_id: Annotated[
        str | None,
        Header(
            alias="Last-Event-ID", description="Resume after this event id (sent by EventSource)."
        ),
    ] = None,
) -> EventSourceResponse:
    """The run's events: `case_completed`, `progress` and `run_completed`.

    `case_completed` carries the record, `progress` `{run_id, done, total}`, `run_completed`
    the status and summary. Each event has an increasing `id`: a client reconnecting with
    `Last-Event-ID` gets exactly the events it missed. The stream ends with the run.
    """
    events = await runs.events(run_id, last_event_id, caller.id)
    return EventSourceResponse(server_sent_events(events), ping=15)


@router.post(
    "/{run_id}/cancel",
    operation_id="cancel_run",
    summary="Cancel a run",
    responses=problem_responses(404),
)
async def cancel_run(run_id: RunId, runs: RunsDep, caller: CallerDep) -> RunObject:
    """No new case starts, in-flight calls are cancelled, finished results are kept."""
    return await runs.cancel(run_id, caller.id)


@router.post(
    "/{run_id}/retry",
    operation_id="retry_run",
    summary="Re-run a finished run's failed cases",
    responses=problem_responses(404, described={409: NOT_FINISHED}),
)
async def retry_run(run_id: RunId, runs: RunsDep, caller: CallerDep) -> RunObject:
    """Run again the cases whose status is `error` or `judge_error`.

    For a cancelled run, the cases never run are run too; the other results are kept.
    """
    return await runs.retry(run_id, caller.id)


@router.post(
    "/{run_id}/regrade",
    operation_id="regrade_run",
    summary="Grade a finished run's answers again",
    status_code=202,
    responses=problem_responses(400, 404, 422, described={409: NOT_FINISHED}),
    dependencies=[Depends(text_json_body)],
)
async def regrade_run(
    run_id: RunId,
    response: Response,
    runs: RunsDep,
    caller: CallerDep,
    regrade: Annotated[RegradeRequest | None, Body(openapi_examples=regrade_examples())] = None,
) -> RunObject:
    """A new run grading the stored candidate answers again (the candidate is not called).

    Give new `evaluators` and/or another `judge_target`; the new run's `parent_run_id`
    names this one.
    """
    run = await runs.regrade(run_id, regrade or RegradeRequest(), caller.id)
    response.headers["Location"] = f"/runs/{run.id}"
    return run


@router.delete(
    "/{run_id}",
    operation_id="delete_run",
    summary="Delete a finished run",
    status_code=204,
    response_class=Response,
    responses=problem_responses(
        404, described={409: NOT_FINISHED + " Cancel it, or wait until it finishes."}
    ),
)
async def delete_run(run_id: RunId, runs: RunsDep, caller: CallerDep) -> None:
    """Remove a finished run with its results and events (409 while it runs).

    The prefilled `run_sample` is the server's sample run: deleted, it comes back at the next
    start.
    """
    await runs.delete(run_id, caller.id)
