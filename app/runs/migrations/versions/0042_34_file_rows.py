"""The number of rows of an uploaded file, counted when it was checked: ``openai_files.rows``.

A run naming a file too large for it is refused from this count, without reading the file
again; files stored before (null) are counted when a run reads them.

Revision ID: 0042_34
Revises: 0041_39
Create Date: 2026-11-27 09:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0042_34"
down_revision: str | None = "0041_39"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.add_column("openai_files", sa.Column("rows", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("openai_files") as batch:
        batch.drop_column("rows")
