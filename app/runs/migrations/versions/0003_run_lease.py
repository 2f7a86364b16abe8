"""Runs are executed by one replica at a time: ``runs.lease_holder`` and ``lease_until``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 02:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("lease_holder", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("lease_until")
        batch_op.drop_column("lease_holder")
