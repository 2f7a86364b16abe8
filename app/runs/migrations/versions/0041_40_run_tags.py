"""Tags on runs: the ``run_tags`` table (issue 40).

CI tags the runs it makes (``main``, ``release-2.1``) and compares a pull request's run with
the newest finished run carrying a tag; ``GET /runs?tag=`` finds them through ``ix_run_tags_tag``.

Revision ID: 0041_40
Revises: 0040_37
Create Date: 2026-11-27 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0041_40"
down_revision: str | None = "0040_37"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "run_tags",
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("tag", sa.String(length=100), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_tags_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "tag", name=op.f("pk_run_tags")),
    )
    op.create_index("ix_run_tags_tag", "run_tags", ["tag"])


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_run_tags_tag", table_name="run_tags")
    op.drop_table("run_tags")
