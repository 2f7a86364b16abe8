"""Webhook endpoints the operator registers: where run events are posted, and with what secret.

Each endpoint has a URL, a Standard Webhooks secret (``whsec_`` + base64, as OpenAI and
every Standard Webhooks library write it) and the events it wants (default: all of them).
"""

from __future__ import annotations

import base64
import binascii
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

WebhookEvent = Literal[
    "eval.run.succeeded",
    "eval.run.failed",
    "eval.run.canceled",
    "run.succeeded",
    "run.failed",
    "run.canceled",
]
WEBHOOK_EVENTS: tuple[WebhookEvent, ...] = (
    "eval.run.succeeded",
    "eval.run.failed",
    "eval.run.canceled",
    "run.succeeded",
    "run.failed",
    "run.canceled",
)
SECRET_PREFIX = "whsec_"
REGISTERED_PREFIX = "we_"
"""Ids of endpoints registered through the API (``POST /webhooks``)."""


class WebhookEndpoint(BaseModel):
    """One endpoint: ``{name, url, secret, events}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")
    url: str = Field(min_length=1, max_length=2000)
    secret: SecretStr
    events: tuple[WebhookEvent, ...] = WEBHOOK_EVENTS

    @field_validator("name")
    @classmethod
    def _not_a_registered_id(cls, value: str) -> str:
        if value.startswith(REGISTERED_PREFIX):
            raise ValueError(
                f"names starting {REGISTERED_PREFIX!r} are those of registered endpoints"
            )
        return value

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("a webhook URL starts with http:// or https://")
        return value

    @field_validator("secret")
    @classmethod
    def _standard_secret(cls, value: SecretStr) -> SecretStr:
        check_secret(value.get_secret_value())
        return value


def check_secret(secret: str) -> None:
    """Refuse a secret that is not ``whsec_`` + base64 of 24 bytes or more (by ValueError)."""
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the secret must be whsec_ followed by base64") from None
    if len(key) < 24:
        raise ValueError("the secret must hold at least 24 bytes (32 recommended)")
