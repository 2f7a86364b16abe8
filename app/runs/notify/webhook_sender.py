"""Posts stored webhook deliveries: signed (Standard Webhooks), retried with backoff.

Every process with endpoints configured (``EVAL_WEBHOOKS``), or able to sign for registered
ones (``EVAL_WEBHOOK_SECRETS_KEY``: their secrets are opened at each try), runs one loop: it
claims due deliveries (``WebhookStore.claim_due``), posts each to its endpoint's URL and
records the outcome. A
2xx delivers; anything else (a refused address, a timeout, another status) is tried again
after ``webhook_retry_base_seconds`` doubled per try up to ``webhook_retry_cap_seconds``,
until ``webhook_max_attempts``. The URL goes through the same address rules as inline
targets (``app.providers.access.addresses``: resolved once, every address checked, the connection
pinned to them; loopback and private addresses only with ``EVAL_WEBHOOK_ALLOW_PRIVATE``).

The signature is the Standard Webhooks scheme (``standardwebhooks``): ``webhook-id`` (the
delivery's id, the same on every try), ``webhook-timestamp`` (the try's time) and
``webhook-signature`` (``v1,`` + base64 HMAC-SHA256 of ``id.timestamp.body``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

import aiohttp
import httpx
from pydantic import SecretStr
from standardwebhooks.webhooks import Webhook

from app.errors import InvalidRequest
from app.observability.logging import add_log_secrets
from app.providers.access.addresses import pin_host, pinned_connector
from app.runs.notify.webhook_endpoints import WebhookEndpointStore
from app.runs.notify.webhook_secrets import SealedSecretError, SecretBox
from app.runs.notify.webhooks import Delivery, WebhookStore
from app.runs.storage.store_base import utc_now
from app.settings import Settings
from app.settings.webhooks import WebhookEndpoint

logger = logging.getLogger("app.runs.notify.webhooks")
POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Destination:
    """Where a delivery goes and the secret that signs it (settings' or a registered one)."""

    url: str
    secret: SecretStr


def signed_headers(secret: SecretStr, delivery: Delivery, moment: datetime) -> dict[str, str]:
    """The Standard Webhooks headers of one try of ``delivery``."""
    signature = Webhook(secret.get_secret_value()).sign(delivery.id, moment, delivery.payload)
    return {
        "content-type": "application/json",
        "user-agent": "eval-execution-webhooks",
        "webhook-id": delivery.id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": signature,
    }


class WebhookSender:
    """The delivery loop of one process."""

    def __init__(
        self,
        settings: Settings,
        store: WebhookStore,
        registered: WebhookEndpointStore,
        box: SecretBox | None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._registered = registered
        self._box = box
        self._endpoints: Mapping[str, WebhookEndpoint] = {e.name: e for e in settings.webhooks}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the loop (nothing to do without endpoints nor a key to register them)."""
        if (self._endpoints or self._box) and self._task is None:
            self._task = asyncio.create_task(self._loop(), name="webhook-deliveries")

    async def aclose(self) -> None:
        """Stop the loop; a try cut short is tried again once its claim runs out."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        lease = timedelta(seconds=self._settings.webhook_timeout_seconds + 30)
        while True:
            try:
                due = await self._store.claim_due(lease)
                await asyncio.gather(*(self._try(delivery) for delivery in due))
            except asyncio.CancelledError:
                raise
            except Exception:  # the database away for a while: try again at the next poll
                logger.exception("webhook deliveries could not be read or recorded")
                due = []
            if not due:
                await asyncio.sleep(POLL_SECONDS)

    async def _destination(self, name: str) -> Destination | str | None:
        """Where deliveries to ``name`` go; why they cannot go now (str); None: it is gone."""
        configured = self._endpoints.get(name)
        if configured is not None:
            return Destination(configured.url, configured.secret)
        registered = await self._registered.get(name)
        if registered is None:
            return None
        if self._box is None:
            return "EVAL_WEBHOOK_SECRETS_KEY is not set: registered endpoints cannot be signed"
        try:
            secret = self._box.open(registered.sealed_secret, registered.id)
        except SealedSecretError as exc:
            return str(exc)
        add_log_secrets([secret])
        return Destination(registered.url, SecretStr(secret))

    async def _try(self, delivery: Delivery) -> None:
        endpoint = await self._destination(delivery.endpoint)
        if endpoint is None:
            await self._store.record(
                delivery,
                delivered=False,
                status_code=None,
                error=f"endpoint {delivery.endpoint!r} is no longer configured",
                retry_at=None,
            )
            return
        status: int | None = None
        error: str | None = endpoint if isinstance(endpoint, str) else None
        if not isinstance(endpoint, str):
            status, error = await self._post(endpoint, delivery)
        delivered = status is not None and 200 <= status < 300
        retry_at = None if delivered else self._retry_at(delivery.attempts + 1)
        if not delivered:
            logger.warning(
                "webhook %s to %s failed (try %d): %s",
                delivery.id,
                delivery.endpoint,
                delivery.attempts + 1,
                error or f"HTTP {status}",
            )
        await self._store.record(
            delivery, delivered=delivered, status_code=status, error=error, retry_at=retry_at
        )

    def _retry_at(self, attempts: int) -> datetime | None:
        settings = self._settings
        if attempts >= settings.webhook_max_attempts:
            return None
        wait = settings.webhook_retry_base_seconds * 2 ** (attempts - 1)
        return utc_now() + timedelta(seconds=min(wait, settings.webhook_retry_cap_seconds))

    async def _post(
        self, endpoint: Destination, delivery: Delivery
    ) -> tuple[int | None, str | None]:
        """The endpoint's status code, or why there is none."""
        try:
            pinned = await pin_host(
                httpx.URL(endpoint.url), allow_private=self._settings.webhook_allow_private
            )
        except InvalidRequest as exc:
            return None, exc.detail.replace("inline target host", "webhook host")
        timeout = aiohttp.ClientTimeout(total=self._settings.webhook_timeout_seconds)
        headers = signed_headers(endpoint.secret, delivery, utc_now())
        try:
            async with (
                aiohttp.ClientSession(
                    connector=pinned_connector(pinned)(), timeout=timeout
                ) as session,
                session.post(
                    endpoint.url, data=delivery.payload.encode(), headers=headers,
                    allow_redirects=False,
                ) as response,
            ):  # fmt: skip
                await response.read()
                return response.status, None if response.status < 300 else f"HTTP {response.status}"
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return None, f"{type(exc).__name__}: {exc}"[:300] if str(exc) else type(exc).__name__
