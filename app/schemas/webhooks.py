"""Webhook pages: endpoints registered and listed (never their secrets), deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from app.settings.webhooks import WebhookEvent, check_secret

DeliveryStatus = Literal["pending", "delivered", "failed"]


EndpointSource = Literal["settings", "api"]


class WebhookEndpointCreate(BaseModel):
    """An endpoint to register: where the caller's run events are posted."""

    model_config = ConfigDict(extra="forbid")
    url: str = Field(
        min_length=1,
        max_length=2000,
        description=(
            "http(s) URL events are POSTed to; the address rules of inline targets apply "
            "(loopback and private addresses only with `EVAL_WEBHOOK_ALLOW_PRIVATE`)."
        ),
        examples=["https://hooks.example.com/evals"],
    )
    events: list[WebhookEvent] | None = Field(
        None,
        min_length=1,
        description="The event types it gets (default: every one).",
        examples=[["eval.run.succeeded", "eval.run.failed"]],
    )
    description: str | None = Field(None, max_length=500)
    secret: SecretStr | None = Field(
        None,
        max_length=100,
        description=(
            "Its Standard Webhooks signing secret (`whsec_` + base64 of 24 bytes or more), "
            "to keep one your receiver already has; never shown again. Omitted: the service "
            "makes one and shows it once, in this request's response."
        ),
    )

    @field_validator("secret")
    @classmethod
    def _standard_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            check_secret(value.get_secret_value())
        return value


class WebhookEndpointView(BaseModel):
    """An endpoint, without its secret."""

    id: str = Field(
        description="The name of one of `EVAL_WEBHOOKS`, or `we_...` for a registered one."
    )
    source: EndpointSource = Field(
        description="`settings` (`EVAL_WEBHOOKS`, every run's events) or `api` (registered)."
    )
    url: str
    events: list[str]
    description: str | None = None
    created_at: datetime | None = Field(None, description="When it was registered (api).")


class WebhookEndpointCreated(WebhookEndpointView):
    """The endpoint just registered, with its secret when the service made it."""

    secret: str | None = Field(
        description=(
            "The signing secret the service made (`whsec_...`): shown in this response only, "
            "keep it now; null when the request gave one."
        )
    )


class WebhookEndpointList(BaseModel):
    """The endpoints of `EVAL_WEBHOOKS`, then those the caller registered."""

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
