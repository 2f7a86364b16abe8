"""Alembic environment for the runs database.

The service applies migrations on start-up through ``app.runs.migrate`` and hands its own
connection in ``config.attributes["connection"]``; from the command line
(``alembic upgrade head``) the URL comes from the settings (``EVAL_DATABASE_URL``).
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from app.runs.database import lock_migrations
from app.runs.tables import Base

target_metadata = Base.metadata


def run_with_connection(connection: Connection) -> None:
    """Run the migrations on an open (sync-facing) connection, one process at a time."""
    lock_migrations(connection)
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_from_command_line() -> None:
    """Open an engine on the configured URL and migrate it."""
    from app.runs.database import create_engine, database_url
    from app.settings import load_settings

    engine = create_engine(database_url(load_settings()))
    async with engine.connect() as connection:
        await connection.run_sync(run_with_connection)
        await connection.commit()
    await engine.dispose()


given_connection = context.config.attributes.get("connection")
if given_connection is not None:
    run_with_connection(given_connection)
else:
    asyncio.run(run_from_command_line())
