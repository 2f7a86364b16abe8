"""What a regraded case's candidate produced besides its answer: ``cases.candidate_output``.

JSON ``{turns, file_changes}`` (a live conversation's answers turn by turn, a workspace's
changes) taken from the earlier record when it has either, so that a regrade grades them too.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("cases", schema=None) as batch_op:
        batch_op.add_column(sa.Column("candidate_output", sa.Text(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("cases", schema=None) as batch_op:
        batch_op.drop_column("candidate_output")
