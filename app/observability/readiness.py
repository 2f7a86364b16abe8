"""Readiness: can this process serve evaluations now (database, migrations, targets)?"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import cache, partial
from typing import Literal

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import AsyncEngine

from app.errors import ServiceUnavailable

logger = logging.getLogger("app.readiness")
PING_TIMEOUT_SECONDS = 5.0


class Readiness(BaseModel):
    """Each dependency's state; ``ready`` only when all are ``ok`` or not used."""

    status: Literal["ready", "not_ready"] = Field(examples=["ready"])
    checks: dict[str, str] = Field(examples=[{"database": "ok", "targets": "ok"}])


class MigrationsPending(Exception):
    """The database schema is not at the latest migration."""


@cache
def _migration_heads() -> frozenset[str]:
    # Imported here: the runs package is optional for this module (it may not be wired).
    from app.runs.database import alembic_config

    return frozenset(ScriptDirectory.from_config(alembic_config()).get_heads())


async def check_schema(engine: AsyncEngine) -> None:
    """Connect and compare the schema's Alembic revision with the latest migration.

    Raises:
        MigrationsPending: the schema is behind (or ahead of) the code's migrations.
    """
    async with engine.connect() as connection:
        current = await connection.run_sync(
            lambda sync: frozenset(MigrationContext.configure(sync).get_current_heads())
        )
    heads = _migration_heads()
    if current != heads:
        at = ", ".join(sorted(current)) or "none"
        raise MigrationsPending(f"schema at {at}, latest is {', '.join(sorted(heads))}")


def _database_probe(services: object) -> Callable[[], Awaitable[object]] | None:
    """The store's own ``ping``, else a schema check on its ``engine``, else ``None``."""
    store = getattr(services, "store", None)
    ping = getattr(store, "ping", None)
    if callable(ping):
        return ping  # type: ignore[no-any-return]
    engine = getattr(store, "engine", None)
    if isinstance(engine, AsyncEngine):
        return partial(check_schema, engine)
    return None


async def _database_state(services: object) -> str:
    probe = _database_probe(services)
    if probe is None:
        return "not used"
    try:
        await asyncio.wait_for(probe(), PING_TIMEOUT_SECONDS)
    except MigrationsPending as exc:
        return f"migrations pending: {exc}"
    # Whatever else the probe raises (driver, network, timeout), the answer is "not ready".
    except Exception as exc:
        logger.warning("readiness: database check failed", exc_info=True)
        return f"failed: {type(exc).__name__}"
    return "ok"


def _targets_state(services: object) -> str:
    if getattr(services, "providers", None) is not None:
        return "ok"
    settings = getattr(services, "settings", None)
    return "not loaded" if getattr(settings, "targets_file", None) else "not used"


async def assess_readiness(services: object | None) -> Readiness:
    """Check the database (reachable, migrated) and the targets.

    Raises:
        ServiceUnavailable: 503 naming every check that failed (also while starting).
    """
    if services is None:
        checks = {"startup": "in progress"}
    else:
        checks = {"database": await _database_state(services), "targets": _targets_state(services)}
    failed = {name: state for name, state in checks.items() if state not in ("ok", "not used")}
    if failed:
        raise ServiceUnavailable(
            "not ready: " + ", ".join(f"{name} {state}" for name, state in failed.items()),
            title="Service not ready",
            extra={"checks": checks},
        )
    return Readiness(status="ready", checks=checks)
