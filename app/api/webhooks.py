"""``/webhooks``: the configured endpoints and the deliveries of run events to them."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from app.api.auth import CallerDep
from app.api.dependencies import ServicesDep
from app.schemas.runs import SAMPLE_RUN_ID
from app.schemas.webhooks import WebhookDeliveryPage, WebhookEndpointList

router = APIRouter(prefix="/webhooks", tags=["webhooks"])


@router.get("", operation_id="list_webhook_endpoints", summary="List webhook endpoints")
async def list_endpoints(services: ServicesDep) -> WebhookEndpointList:
    """The endpoints run events are posted to (`EVAL_WEBHOOKS`), without their secrets."""
    return services.webhooks.endpoints()


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
