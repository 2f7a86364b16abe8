"""What the webhook pages return: the endpoints (never their secrets) and the deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

DeliveryStatus = Literal["pending", "delivered", "failed"]


class WebhookEndpointView(BaseModel):
    """A configured endpoint, without its secret."""

    name: str
    url: str
    events: list[str]


class WebhookEndpointList(BaseModel):
    """Every endpoint the operator configured (``EVAL_WEBHOOKS``)."""

    endpoints: list[WebhookEndpointView]


class WebhookDeliveryView(BaseModel):
    """One event posted (or to post) to one endpoint."""

    id: str = Field(description="The `webhook-id` header of every try.")
    endpoint: str
    event_id: str
    event_type: str
    run_id: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime | None = Field(description="When a pending one is tried next.")
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None


class WebhookDeliveryPage(BaseModel):
    """Deliveries, newest first; pass `next` as `after` for more."""

    deliveries: list[WebhookDeliveryView]
    next: str | None
