"""Readiness: can this process serve evaluations now (database, migrations, targets, links)?"""

from __future__ import annotations

import asyncio
import logging
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from app.errors import SchemaNotCurrent, ServiceUnavailable
from app.observability.links import Links

logger = logging.getLogger("app.readiness")
PING_TIMEOUT_SECONDS = 5.0


class Readiness(BaseModel):
    """Each dependency's state; ``ready`` only when all are ``ok`` or not used."""

    status: Literal["ready", "not_ready"] = Field(examples=["ready"])
    checks: dict[str, str] = Field(examples=[{"database": "ok", "targets": "ok"}])


class SchemaCheck(Protocol):
    """What readiness needs of the database (the runs store)."""

    async def check_schema(self) -> None:
        """Raise ``SchemaNotCurrent`` unless the schema is at the latest migration."""
        ...


async def _database_state(store: SchemaCheck) -> str:
    try:
        await asyncio.wait_for(store.check_schema(), PING_TIMEOUT_SECONDS)
    except SchemaNotCurrent as exc:
        return f"migrations pending: {exc.detail}"
    # Whatever else the probe raises (driver, network, timeout), the answer is "not ready".
    except Exception as exc:
        logger.warning("readiness: database check failed", exc_info=True)
        return f"failed: {type(exc).__name__}"
    return "ok"


async def assess_readiness(store: SchemaCheck | None, links: Links | None = None) -> Readiness:
    """Check the database (reachable, migrated) and the process's long-lived links to it.

    Targets are loaded once start-up is done.

    Args:
        store: The runs store, or ``None`` while start-up is still in progress.
        links: The state of the case queue's connection, the fleet limits' listener and
            the loops on the database (PostgreSQL), each a check of its own.

    Raises:
        ServiceUnavailable: 503 naming every check that failed (also while starting).
    """
    if store is None:
        checks = {"startup": "in progress"}
    else:
        checks = {"database": await _database_state(store), "targets": "ok"}
        checks |= links.checks() if links is not None else {}
    failed = {name: state for name, state in checks.items() if state not in ("ok", "not used")}
    if failed:
        raise ServiceUnavailable(
            "not ready: " + ", ".join(f"{name} {state}" for name, state in failed.items()),
            title="Service not ready",
            extra={"checks": checks},
        )
    return Readiness(status="ready", checks=checks)
