"""Webhook endpoints registered through the API, as stored (``webhook_endpoints`` rows).

An endpoint belongs to the caller who registered it and gets the events of that caller's
runs (with authentication off every caller is the same nobody: every run). Its secret is
stored sealed (``app.runs.notify.webhook_secrets``); this module never sees it in the clear.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.runs.storage.store_base import StoreBase, aware
from app.runs.tables import WebhookEndpointRow


@dataclass(frozen=True)
class RegisteredEndpoint:
    """One registered endpoint; ``sealed_secret`` is its secret as stored (encrypted)."""

    id: str
    owner: str | None
    url: str
    description: str | None
    events: tuple[str, ...]
    sealed_secret: str
    created_at: datetime


def _endpoint(row: WebhookEndpointRow) -> RegisteredEndpoint:
    created = aware(row.created_at)
    assert created is not None
    return RegisteredEndpoint(
        id=row.id,
        owner=row.owner,
        url=row.url,
        description=row.description,
        events=tuple(json.loads(row.events)),
        sealed_secret=row.sealed_secret,
        created_at=created,
    )


def _owned_by(owner: str | None) -> ColumnElement[bool]:
    """Rows of ``owner`` (``None``: those registered with authentication off)."""
    column = WebhookEndpointRow.owner
    return column.is_(None) if owner is None else column == owner


async def endpoints_for_run(session: AsyncSession, owner: str | None) -> list[RegisteredEndpoint]:
    """The registered endpoints that get the events of a run of ``owner`` (in ``session``)."""
    query = select(WebhookEndpointRow).where(_owned_by(owner)).order_by(WebhookEndpointRow.id)
    return [_endpoint(row) for row in (await session.scalars(query)).all()]


class WebhookEndpointStore:
    """Adds, lists, reads and deletes registered endpoints through the run store's sessions.

    A caller (``owner``) sees only its own; ``None`` (authentication off) sees every one.
    """

    def __init__(self, store: StoreBase) -> None:
        self._store = store

    async def add(self, endpoint: RegisteredEndpoint) -> None:
        """Store a new endpoint."""
        async with self._store._writing() as session:
            session.add(
                WebhookEndpointRow(
                    id=endpoint.id,
                    owner=endpoint.owner,
                    url=endpoint.url,
                    description=endpoint.description,
                    events=json.dumps(list(endpoint.events)),
                    sealed_secret=endpoint.sealed_secret,
                    created_at=endpoint.created_at,
                )
            )

    async def listed(self, owner: str | None) -> list[RegisteredEndpoint]:
        """The caller's endpoints, oldest first."""
        query = select(WebhookEndpointRow)
        if owner is not None:
            query = query.where(WebhookEndpointRow.owner == owner)
        query = query.order_by(WebhookEndpointRow.created_at, WebhookEndpointRow.id)
        async with self._store._session() as session:
            return [_endpoint(row) for row in (await session.scalars(query)).all()]

    async def get(self, endpoint_id: str, owner: str | None = None) -> RegisteredEndpoint | None:
        """The endpoint, if it exists and is the caller's (any owner's for ``None``)."""
        async with self._store._session() as session:
            row = await session.get(WebhookEndpointRow, endpoint_id)
        if row is None or (owner is not None and row.owner != owner):
            return None
        return _endpoint(row)

    async def delete(self, endpoint_id: str, owner: str | None) -> bool:
        """Remove the caller's endpoint; whether there was one."""
        statement = delete(WebhookEndpointRow).where(WebhookEndpointRow.id == endpoint_id)
        if owner is not None:
            statement = statement.where(WebhookEndpointRow.owner == owner)
        async with self._store._writing() as session:
            result = await session.execute(statement)
        return bool(getattr(result, "rowcount", 0))
