"""The webhook pages: configured endpoints and the deliveries of the caller's runs."""

from __future__ import annotations

from typing import cast

from app.runs.webhooks import WebhookStore
from app.schemas.webhooks import (
    DeliveryStatus,
    WebhookDeliveryPage,
    WebhookDeliveryView,
    WebhookEndpointList,
    WebhookEndpointView,
)
from app.settings import Settings


class WebhookService:
    """Lists endpoints and deliveries (sending is ``app.runs.webhook_sender``)."""

    def __init__(self, settings: Settings, store: WebhookStore) -> None:
        self._settings = settings
        self._store = store

    def endpoints(self) -> WebhookEndpointList:
        """The configured endpoints, without secrets."""
        return WebhookEndpointList(
            endpoints=[
                WebhookEndpointView(name=e.name, url=e.url, events=list(e.events))
                for e in self._settings.webhooks
            ]
        )

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
