"""Run summaries give pass rates per grader: ``results.graders`` holds each grader's outcome.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 15:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("graders", sa.Text(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_column("graders")
