"""Webhook deliveries as stored: written when a run finishes, claimed, tried, listed.

A finished run is one event (``eval.run.succeeded`` for a run of the OpenAI surface,
``run.succeeded`` for one of ``/runs``; ``failed`` and ``canceled`` likewise), in OpenAI's
payload shape ``{id, object: event, type, created_at, data: {id}}``. ``Outbox.enqueue`` adds
one delivery per endpoint that wants the event inside the transaction that finishes the run,
so no finished run misses its event, whichever process finishes it. Deliveries are claimed
for a while (``claimed_until``) so two processes never post the same one at once; a process
killed mid-try leaves a claim that runs out, and the delivery is tried again (at least once).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.runs.notify.webhook_endpoints import endpoints_for_run
from app.runs.storage.store_base import StoreBase, aware, utc_now
from app.runs.tables import OpenAIEvalRunRow, WebhookDeliveryRow
from app.settings.webhooks import WebhookEndpoint

EVENT_SUFFIXES = {"completed": "succeeded", "failed": "failed", "cancelled": "canceled"}
"""A run's final status -> the end of its event's name."""


@dataclass(frozen=True)
class Delivery:
    """A delivery as the API lists it and the sender tries it."""

    id: str
    endpoint: str
    event_id: str
    event_type: str
    run_id: str
    payload: str
    status: str
    attempts: int
    next_attempt_at: datetime
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None


def _delivery(row: WebhookDeliveryRow) -> Delivery:
    created, due = aware(row.created_at), aware(row.next_attempt_at)
    assert created is not None
    assert due is not None
    return Delivery(
        id=row.id,
        endpoint=row.endpoint,
        event_id=row.event_id,
        event_type=row.event_type,
        run_id=row.run_id,
        payload=row.payload,
        status=row.status,
        attempts=row.attempts,
        next_attempt_at=due,
        last_status_code=row.last_status_code,
        last_error=row.last_error,
        created_at=created,
        delivered_at=aware(row.delivered_at),
    )


@dataclass(frozen=True)
class Outbox:
    """The endpoints a finished run's event goes to, and how it is written.

    ``endpoints`` are the settings' (every run's events); registered endpoints
    (``webhook_endpoints`` rows) get those of their owner's runs.
    """

    endpoints: tuple[WebhookEndpoint, ...] = ()

    async def enqueue(
        self, session: AsyncSession, run_id: str, status: str, owner: str | None, now: datetime
    ) -> None:
        """Add the run's event for every endpoint that wants it (in the caller's transaction)."""
        suffix = EVENT_SUFFIXES.get(status)
        if suffix is None:
            return
        wanted: list[tuple[str, Sequence[str]]] = [(e.name, e.events) for e in self.endpoints]
        wanted += [(e.id, e.events) for e in await endpoints_for_run(session, owner)]
        if not wanted:
            return
        kind = "eval.run" if await session.get(OpenAIEvalRunRow, run_id) is not None else "run"
        event_type = f"{kind}.{suffix}"
        event_id = f"evt_{uuid.uuid4().hex}"
        payload = json.dumps(
            {
                "id": event_id,
                "object": "event",
                "type": event_type,
                "created_at": int(now.timestamp()),
                "data": {"id": run_id},
            }
        )
        for endpoint, events in wanted:
            if event_type in events:
                session.add(
                    WebhookDeliveryRow(
                        id=f"msg_{uuid.uuid4().hex}",
                        endpoint=endpoint,
                        event_id=event_id,
                        event_type=event_type,
                        run_id=run_id,
                        owner=owner,
                        payload=payload,
                        status="pending",
                        attempts=0,
                        next_attempt_at=now,
                        created_at=now,
                    )
                )


class WebhookStore:
    """Claims, results and pages of deliveries, through the run store's sessions."""

    def __init__(self, store: StoreBase) -> None:
        self._store = store

    async def claim_due(self, lease: timedelta, limit: int = 20) -> list[Delivery]:
        """Pending deliveries that are due and not claimed by a live try, now claimed."""
        now = utc_now()
        query = (
            select(WebhookDeliveryRow.id)
            .where(
                WebhookDeliveryRow.status == "pending",
                WebhookDeliveryRow.next_attempt_at <= now,
                or_(
                    WebhookDeliveryRow.claimed_until.is_(None),
                    WebhookDeliveryRow.claimed_until < now,
                ),
            )
            .order_by(WebhookDeliveryRow.next_attempt_at)
            .limit(limit)
        )
        claimed: list[Delivery] = []
        async with self._store._writing() as session:
            for delivery_id in (await session.scalars(query)).all():
                taken = await session.execute(
                    update(WebhookDeliveryRow)
                    .where(
                        WebhookDeliveryRow.id == delivery_id,
                        WebhookDeliveryRow.status == "pending",
                        or_(
                            WebhookDeliveryRow.claimed_until.is_(None),
                            WebhookDeliveryRow.claimed_until < now,
                        ),
                    )
                    .values(claimed_until=now + lease)
                    .returning(WebhookDeliveryRow)
                )
                row = taken.scalar_one_or_none()
                if row is not None:
                    claimed.append(_delivery(row))
        return claimed

    async def record(
        self,
        delivery: Delivery,
        *,
        delivered: bool,
        status_code: int | None,
        error: str | None,
        retry_at: datetime | None,
    ) -> None:
        """Note one try: delivered, due again at ``retry_at``, or given up (no ``retry_at``)."""
        now = utc_now()
        status = "delivered" if delivered else ("pending" if retry_at else "failed")
        async with self._store._writing() as session:
            await session.execute(
                update(WebhookDeliveryRow)
                .where(WebhookDeliveryRow.id == delivery.id)
                .values(
                    status=status,
                    attempts=WebhookDeliveryRow.attempts + 1,
                    next_attempt_at=retry_at or now,
                    claimed_until=None,
                    last_status_code=status_code,
                    last_error=error[:500] if error else None,
                    delivered_at=now if delivered else None,
                )
            )

    async def page(
        self,
        owner: str | None,
        *,
        status: str | None,
        run_id: str | None,
        after: str | None,
        limit: int,
    ) -> tuple[list[Delivery], bool]:
        """Deliveries newest first (of the owner's runs), and whether more follow."""
        query = select(WebhookDeliveryRow)
        if owner is not None:
            query = query.where(WebhookDeliveryRow.owner == owner)
        if status is not None:
            query = query.where(WebhookDeliveryRow.status == status)
        if run_id is not None:
            query = query.where(WebhookDeliveryRow.run_id == run_id)
        async with self._store._session() as session:
            if after is not None:
                anchor = await session.get(WebhookDeliveryRow, after)
                if anchor is not None:
                    query = query.where(
                        (WebhookDeliveryRow.created_at < anchor.created_at)
                        | (
                            (WebhookDeliveryRow.created_at == anchor.created_at)
                            & (WebhookDeliveryRow.id < anchor.id)
                        )
                    )
            query = query.order_by(
                WebhookDeliveryRow.created_at.desc(), WebhookDeliveryRow.id.desc()
            ).limit(limit + 1)
            rows: Sequence[WebhookDeliveryRow] = (await session.scalars(query)).all()
        return [_delivery(row) for row in rows[:limit]], len(rows) > limit
