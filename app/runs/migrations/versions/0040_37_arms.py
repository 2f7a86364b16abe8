"""Arms of a run on several targets (issue 37): ``runs.arms``, ``cases.arm``, ``results.arm``.

A run's arms (JSON list of ``{index, target, prompt}``) are kept on its row; each case row
runs on one arm and each result row says its arm, so a case runs once per arm and is
stored once per arm. Runs stored before have no arms (null everywhere), as one-target runs.

Revision ID: 0040_37
Revises: 0039
Create Date: 2026-11-27 09:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0040_37"
down_revision: str | None = "0039"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    # Not in batch mode: SQLite's batch mode copies the table, and dropping the old `runs`
    # would cascade to every case and result of every run.
    op.add_column("runs", sa.Column("arms", sa.Text(), nullable=True))
    op.add_column("cases", sa.Column("arm", sa.Integer(), nullable=True))
    op.add_column("results", sa.Column("arm", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    op.drop_column("results", "arm")
    op.drop_column("cases", "arm")
    op.drop_column("runs", "arms")
