"""Engine creation and schema migration for the runs database.

SQLite (aiosqlite) by default, a file under the data folder created on first start;
PostgreSQL (asyncpg) when ``database_url`` names one. Migrations are Alembic's, applied on
start-up through the service's own async engine. On PostgreSQL every migration runs under
one advisory lock, so any number of processes may start together on an empty database: one
migrates, the others wait for it and find the schema current.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.util import await_only

from app.errors import SchemaNotCurrent
from app.settings import Settings

logger = logging.getLogger("app.runs.database")
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
MIGRATION_LOCK_KEY = 0x6576616C5F6D6967
"""The advisory lock every process migrating a PostgreSQL database holds (``eval_mig``)."""


def database_url(settings: Settings) -> str:
    """The configured database URL, or a SQLite file under ``data_dir``."""
    if settings.database_url:
        return settings.database_url
    return f"sqlite+aiosqlite:///{(settings.data_dir / 'eval.db').resolve()}"


def _set_sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    # WAL lets readers (SSE, exports) proceed while a case result is being written.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def create_engine(url: str) -> AsyncEngine:
    """An async engine on ``url``; creates the SQLite file's folder when needed."""
    options: dict[str, Any] = {}
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # One writer at a time anyway; a few connections serve the short reads, and each
        # keeps its own page cache, so more connections only cost memory.
        options = {"pool_size": 4, "max_overflow": 4}
    else:
        # A database that went away (restarting, a host that no longer answers) fails a
        # connection attempt after a few seconds, not asyncpg's default of a minute.
        options = {"pool_size": 10, "max_overflow": 10, "connect_args": {"timeout": 5.0}}
    engine = create_async_engine(url, **options)
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _set_sqlite_pragmas)
    else:
        event.listen(engine.sync_engine, "checkout", _ping)
    return engine


def _ping(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry, _proxy: Any) -> None:
    """Check a pooled PostgreSQL connection as it is checked out; a dead one is replaced.

    SQLAlchemy's own ``pool_pre_ping`` wraps its ``;`` in BEGIN and ROLLBACK on asyncpg: three
    round trips before every session, which on a busy event loop each wait their turn. This
    sends one ``SELECT 1`` in the simple protocol (nothing prepared, no transaction).
    """
    try:
        await_only(dbapi_connection.driver_connection.execute("SELECT 1"))
    except Exception as exc:
        raise DisconnectionError("the pooled connection no longer answers") from exc


def alembic_config() -> Config:
    """The Alembic configuration, built in code (no ini file needed at run time)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def lock_migrations(connection: Connection) -> None:
    """Wait for (then hold until the transaction ends) PostgreSQL's lock on migrating.

    Alembic reads the schema's revision and creates its table without a lock of its own:
    processes migrating an empty database at once all try to create it, and all but one
    fail. Under the lock the first migrates; each next one finds the schema current.
    """
    if connection.dialect.name != "postgresql":
        return  # SQLite: one process owns the file (a writer holds the whole database)
    key = {"key": MIGRATION_LOCK_KEY}
    if not connection.execute(text("SELECT pg_try_advisory_xact_lock(:key)"), key).scalar():
        logger.info("another process is migrating the database: waiting for it")
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), key)


def _upgrade(connection: Connection) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def migrate(engine: AsyncEngine) -> None:
    """Bring the schema to the latest revision."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)


@cache
def _migration_heads() -> frozenset[str]:
    return frozenset(ScriptDirectory.from_config(alembic_config()).get_heads())


async def check_schema(engine: AsyncEngine) -> None:
    """Connect and compare the schema's Alembic revision with the latest migration.

    Raises:
        SchemaNotCurrent: The schema is behind (or ahead of) the code's migrations.
    """
    async with engine.connect() as connection:
        current = await connection.run_sync(
            lambda sync: frozenset(MigrationContext.configure(sync).get_current_heads())
        )
    heads = _migration_heads()
    if current != heads:
        at = ", ".join(sorted(current)) or "none"
        raise SchemaNotCurrent(f"schema at {at}, latest is {', '.join(sorted(heads))}")
