"""Request-rate buckets in the database: ``rate_buckets``, one row per caller.

With PostgreSQL every replica takes its tokens from the same row, so a key's rate holds
for the whole fleet.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 14:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "rate_buckets",
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("granted", sa.Boolean(), nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("rate_buckets")
