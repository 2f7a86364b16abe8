"""A run's name as a column: ``runs.name``, the suite's name or the eval's.

The viewer lists runs by name; reading each run's spec (which holds its files) to find it
would cost far more. Filled in for runs stored before from their spec's dataset.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 06:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    # Not in batch mode: SQLite's batch mode copies the table, and dropping the old `runs`
    # would cascade to every case and result of every run.
    op.add_column("runs", sa.Column("name", sa.String(length=500), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        # json refuses an escaped NUL, which a spec's files may hold: read as \u0001.
        dataset = "(replace(spec, '\\u0000', '\\u0001')::json -> 'suite' ->> 'dataset')"
    else:
        dataset = "json_extract(spec, '$.suite.dataset')"
    op.execute(f"UPDATE runs SET name = {dataset}")


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("runs", "name")
