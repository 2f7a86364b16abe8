"""What ``/docs`` shows of ``/runs`` beyond the route signatures.

The run id parameter (its example is the sample run a fresh server creates), the event
stream (``text/event-stream``, each event's data schema under ``x-events``) and the refusals
of ``POST /runs`` with examples of their own.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path
from pydantic import BaseModel

from app.api.problems import problem_responses
from app.errors import IdempotencyConflict, TooManyRequests
from app.evaluation.records import ResultRecord
from app.schemas.runs import SAMPLE_RUN_ID, ProgressEvent, RunCompletedEvent

RunId = Annotated[
    str,
    Path(
        description="The run's id (`id` of `POST /runs`; `Location` names it).",
        openapi_examples={
            "sample_run": {
                "summary": "The sample run a fresh server creates on the mock target",
                "value": SAMPLE_RUN_ID,
            }
        },
    ),
]
NOT_FINISHED = "The run is still queued or running."
EVENT_DATA: dict[str, type[BaseModel]] = {
    "case_completed": ResultRecord,
    "progress": ProgressEvent,
    "run_completed": RunCompletedEvent,
}
EVENT_MODELS = tuple(EVENT_DATA.values())
EVENT_STREAM_EXAMPLE = (
    "id: 1\nevent: case_completed\n"
    'data: {"eval_id": "add", "status": "passed", "score": 1.0, ...}\n\n'
    "id: 2\nevent: progress\n"
    f'data: {{"run_id": "{SAMPLE_RUN_ID}", "done": 1, "total": 2}}\n\n'
    "id: 5\nevent: run_completed\n"
    f'data: {{"run_id": "{SAMPLE_RUN_ID}", "status": "completed", "done": 2, "total": 2, '
    '"summary": {...}}\n\n'
)
EVENT_STREAM_RESPONSE: dict[str, Any] = {
    "description": "Server-Sent Events (`text/event-stream`), each with an increasing `id`, "
    "an `event` type and JSON `data`: `case_completed` (data: a `ResultRecord`) and "
    "`progress` (data: a `ProgressEvent`) as each case finishes, then `run_completed` (data: "
    "a `RunCompletedEvent`), after which the stream ends. A `: ping` comment every 15 s "
    "keeps idle connections open.",
    "content": {
        "text/event-stream": {
            "schema": {"type": "string", "description": "An event stream (see `x-events`)."},
            "example": EVENT_STREAM_EXAMPLE,
            "x-events": {
                name: {"$ref": f"#/components/schemas/{model.__name__}"}
                for name, model in EVENT_DATA.items()
            },
        }
    },
}
CREATE_RUN_REFUSALS = problem_responses(
    400,
    413,
    415,
    422,
    described={
        409: "This Idempotency-Key was used before with another body.",
        429: "Too many runs queued or running for this API key (or too many requests); "
        "`Retry-After` says when to try again.",
    },
    examples={
        409: IdempotencyConflict(
            "this Idempotency-Key was already used with a different request body",
            extra={"run_id": SAMPLE_RUN_ID},
        ),
        429: TooManyRequests(
            "1 runs of this API key are queued or running; the limit is 1. Wait for one to "
            "finish or cancel one.",
            title="Too many runs in flight",
            extra={"runs_in_flight": 1, "limit": 1},
        ),
    },
)
