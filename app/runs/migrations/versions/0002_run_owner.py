"""Runs belong to the API key that created them: ``runs.owner`` and its index.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 01:36:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.String(length=64), nullable=True))
        batch_op.create_index("ix_runs_owner_status", ["owner", "status"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_owner_status")
        batch_op.drop_column("owner")
