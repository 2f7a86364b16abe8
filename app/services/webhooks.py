"""The webhook pages: endpoints (configured and registered) and the caller's deliveries."""

from __future__ import annotations

import base64
import secrets
import uuid
from typing import cast

from app.errors import Conflict, FieldError, InvalidRequest, NotFound
from app.observability.logging import add_log_secrets
from app.providers.access.addresses import pin_host
from app.providers.access.inline import check_inline_url
from app.runs.notify.webhook_endpoints import RegisteredEndpoint, WebhookEndpointStore
from app.runs.notify.webhook_secrets import SecretBox
from app.runs.notify.webhooks import WebhookStore
from app.runs.storage.store_base import utc_now
from app.schemas.webhooks import (
    DeliveryStatus,
    WebhookDeliveryPage,
    WebhookDeliveryView,
    WebhookEndpointCreate,
    WebhookEndpointCreated,
    WebhookEndpointList,
    WebhookEndpointView,
)
from app.settings import Settings
from app.settings.webhooks import (
    REGISTERED_PREFIX,
    SECRET_PREFIX,
    WEBHOOK_EVENTS,
    WebhookEndpoint,
)

SECRET_BYTES = 32


class RegistrationOff(Conflict):
    """An endpoint registered while the service has no key to seal its secret with."""

    slug = "webhook-registration-off"
    title = "Webhook endpoints cannot be registered here"


def new_secret() -> str:
    """A fresh Standard Webhooks secret: ``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _configured_view(endpoint: WebhookEndpoint) -> WebhookEndpointView:
    return WebhookEndpointView(
        id=endpoint.name, source="settings", url=endpoint.url, events=list(endpoint.events)
    )


def _view(endpoint: RegisteredEndpoint) -> WebhookEndpointView:
    return WebhookEndpointView(
        id=endpoint.id,
        source="api",
        url=endpoint.url,
        events=list(endpoint.events),
        description=endpoint.description,
        created_at=endpoint.created_at,
    )


class WebhookService:
    """Registers, lists and deletes endpoints; lists deliveries (sending: ``webhook_sender``)."""

    def __init__(
        self,
        settings: Settings,
        store: WebhookStore,
        endpoints: WebhookEndpointStore,
        box: SecretBox | None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._endpoints = endpoints
        self._box = box

    async def register(
        self, request: WebhookEndpointCreate, caller: str | None
    ) -> WebhookEndpointCreated:
        """Store a new endpoint of the caller's, its secret sealed; the secret shown once.

        Raises:
            RegistrationOff: ``EVAL_WEBHOOK_SECRETS_KEY`` is not set (409).
            InvalidRequest: The URL breaks the address rules of inline targets (422).
        """
        if self._box is None:
            raise RegistrationOff(
                "registering webhook endpoints needs EVAL_WEBHOOK_SECRETS_KEY (the key their "
                "secrets are encrypted with) on the service; configure endpoints in "
                "EVAL_WEBHOOKS instead, or ask the operator to set it"
            )
        await self._check_url(request.url)
        given = request.secret.get_secret_value() if request.secret is not None else None
        generated = None if given else new_secret()
        secret = given or generated or ""
        add_log_secrets([secret])
        endpoint_id = f"{REGISTERED_PREFIX}{uuid.uuid4().hex}"
        endpoint = RegisteredEndpoint(
            id=endpoint_id,
            owner=caller,
            url=request.url,
            description=request.description,
            events=tuple(dict.fromkeys(request.events or WEBHOOK_EVENTS)),
            sealed_secret=self._box.seal(secret, endpoint_id),
            created_at=utc_now(),
        )
        await self._endpoints.add(endpoint)
        return WebhookEndpointCreated(**_view(endpoint).model_dump(), secret=generated)

    async def _check_url(self, url: str) -> None:
        """The inline targets' address rules, now (they are checked again at each try)."""
        allow_private = self._settings.webhook_allow_private
        try:
            checked = check_inline_url(url, allow_private=allow_private)
            await pin_host(checked, allow_private=allow_private)
        except InvalidRequest as exc:
            detail = exc.detail.replace("inline target base URL", "webhook URL")
            detail = detail.replace("inline target host", "webhook host")
            raise InvalidRequest(
                f"url: {detail}", errors=[FieldError(path="url", message=detail)]
            ) from None

    async def endpoints(self, caller: str | None) -> WebhookEndpointList:
        """The configured endpoints, then the caller's registered ones, without secrets."""
        configured = [_configured_view(e) for e in self._settings.webhooks]
        registered = [_view(e) for e in await self._endpoints.listed(caller)]
        return WebhookEndpointList(endpoints=configured + registered)

    async def endpoint(self, endpoint_id: str, caller: str | None) -> WebhookEndpointView:
        """One endpoint, configured or the caller's, without its secret."""
        for configured in self._settings.webhooks:
            if configured.name == endpoint_id:
                return _configured_view(configured)
        found = await self._endpoints.get(endpoint_id, caller)
        if found is None:
            raise NotFound(f"no webhook endpoint has the id {endpoint_id!r}")
        return _view(found)

    async def delete(self, endpoint_id: str, caller: str | None) -> None:
        """Remove a registered endpoint; its pending deliveries then fail, named."""
        if any(configured.name == endpoint_id for configured in self._settings.webhooks):
            raise Conflict(
                f"webhook endpoint {endpoint_id!r} is configured in EVAL_WEBHOOKS: remove it "
                "there (the API deletes only endpoints registered through it)"
            )
        if not await self._endpoints.delete(endpoint_id, caller):
            raise NotFound(f"no webhook endpoint has the id {endpoint_id!r}")

    async def deliveries(
        self,
        caller: str | None,
        *,
        status: str | None,
        run_id: str | None,
        after: str | None,
        limit: int,
    ) -> WebhookDeliveryPage:
        """One page of deliveries of the caller's runs, newest first."""
        rows, more = await self._store.page(
            caller, status=status, run_id=run_id, after=after, limit=limit
        )
        views = [
            WebhookDeliveryView(
                id=row.id,
                endpoint=row.endpoint,
                event_id=row.event_id,
                event_type=row.event_type,
                run_id=row.run_id,
                status=cast(DeliveryStatus, row.status),
                attempts=row.attempts,
                next_attempt_at=row.next_attempt_at if row.status == "pending" else None,
                last_status_code=row.last_status_code,
                last_error=row.last_error,
                created_at=row.created_at,
                delivered_at=row.delivered_at,
            )
            for row in rows
        ]
        return WebhookDeliveryPage(deliveries=views, next=rows[-1].id if more else None)
