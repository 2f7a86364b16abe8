"""Requests and tokens per target as a column: ``results.target_usage`` (issue 39).

The OpenAI surface's ``per_model_usage`` lists each model once with its own calls; the
role columns cannot tell two judge models apart. Results stored before have none (null):
their usage is still counted by role.

Revision ID: 0040_39
Revises: 0041_40
Create Date: 2026-11-27 09:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0040_39"
down_revision: str | None = "0041_40"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    # Not in batch mode: SQLite's batch mode copies the table (see 0011).
    op.add_column("results", sa.Column("target_usage", sa.Text(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("results", "target_usage")
