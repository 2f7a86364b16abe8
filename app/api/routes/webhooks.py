"""``/webhooks``: endpoints run events are posted to (configured and registered), deliveries."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Path, Query, Response

from app.api.dependencies import ServicesDep
from app.api.middleware.auth import CallerDep
from app.api.problems import problem_responses
from app.schemas.runs import SAMPLE_RUN_ID
from app.schemas.webhooks import (
    WebhookDeliveryPage,
    WebhookEndpointCreate,
    WebhookEndpointCreated,
    WebhookEndpointList,
    WebhookEndpointView,
)

router = APIRouter(prefix="/webhooks", tags=["webhooks"])
EndpointId = Annotated[
    str,
    Path(
        max_length=100,
        description="A registered endpoint's `we_...` id, or the name of one of `EVAL_WEBHOOKS`.",
        openapi_examples={
            "registered": {
                "summary": "An endpoint registered through the API",
                "value": "we_4f1c2a9be0d34c8f9a1e6b7c5d3f2e10",
            }
        },
    ),
]
REGISTER_EXAMPLES = {
    "all_events": {
        "summary": "Every run event, a secret made by the service (shown once)",
        "value": {"url": "https://hooks.example.com/evals"},
    },
    "openai_events_own_secret": {
        "summary": "OpenAI's eval run events, signed with a secret the receiver already has",
        "value": {
            "url": "https://hooks.example.com/evals",
            "events": ["eval.run.succeeded", "eval.run.failed", "eval.run.canceled"],
            "description": "the receiver OpenAI's dashboard used to call",
            "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        },
    },
}


@router.get("", operation_id="list_webhook_endpoints", summary="List webhook endpoints")
async def list_endpoints(services: ServicesDep, caller: CallerDep) -> WebhookEndpointList:
    """The endpoints of `EVAL_WEBHOOKS`, then those the caller registered; never a secret."""
    return await services.webhooks.endpoints(caller.id)


@router.post(
    "",
    operation_id="register_webhook_endpoint",
    summary="Register a webhook endpoint",
    status_code=201,
    responses=problem_responses(
        422,
        described={
            409: "Registration needs `EVAL_WEBHOOK_SECRETS_KEY` on the service (the key "
            "endpoint secrets are encrypted with)."
        },
    ),
)
async def register_endpoint(
    body: Annotated[WebhookEndpointCreate, Body(openapi_examples=REGISTER_EXAMPLES)],
    services: ServicesDep,
    caller: CallerDep,
    response: Response,
) -> WebhookEndpointCreated:
    """An endpoint that gets the events of the caller's runs, signed (Standard Webhooks).

    Without `secret`, the service makes one and shows it in this response only; a given
    secret is never shown. Secrets are stored encrypted and are never returned again.
    """
    created = await services.webhooks.register(body, caller.id)
    response.headers["Location"] = f"/webhooks/{created.id}"
    return created


@router.get(
    "/deliveries", operation_id="list_webhook_deliveries", summary="List webhook deliveries"
)
async def list_deliveries(
    services: ServicesDep,
    caller: CallerDep,
    status: Annotated[Literal["pending", "delivered", "failed"] | None, Query()] = None,
    run_id: Annotated[
        str | None,
        Query(
            max_length=100,
            description="Only this run's.",
            openapi_examples={"sample": {"summary": "The sample run", "value": SAMPLE_RUN_ID}},
        ),
    ] = None,
    after: Annotated[str | None, Query(max_length=100, description="`next` of a page.")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> WebhookDeliveryPage:
    """Deliveries of the caller's runs' events, newest first: tries, last status, errors."""
    return await services.webhooks.deliveries(
        caller.id, status=status, run_id=run_id, after=after, limit=limit
    )


@router.get(
    "/{endpoint_id}",
    operation_id="get_webhook_endpoint",
    summary="A webhook endpoint",
    responses=problem_responses(404),
)
async def get_endpoint(
    endpoint_id: EndpointId, services: ServicesDep, caller: CallerDep
) -> WebhookEndpointView:
    """A configured endpoint or one the caller registered, without its secret."""
    return await services.webhooks.endpoint(endpoint_id, caller.id)


@router.delete(
    "/{endpoint_id}",
    operation_id="delete_webhook_endpoint",
    summary="Delete a registered webhook endpoint",
    status_code=204,
    response_class=Response,
    responses=problem_responses(
        404, described={409: "The endpoint is configured in `EVAL_WEBHOOKS`, not registered."}
    ),
)
async def delete_endpoint(
    endpoint_id: EndpointId, services: ServicesDep, caller: CallerDep
) -> None:
    """Remove an endpoint the caller registered; its deliveries still pending then fail, named."""
    await services.webhooks.delete(endpoint_id, caller.id)
