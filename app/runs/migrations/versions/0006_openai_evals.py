"""The OpenAI Evals surface: ``openai_evals``, ``openai_eval_runs``, ``openai_files``.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "openai_evals",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=True),
        sa.Column("name", sa.String(length=500), nullable=False),
        sa.Column("metadata_json", sa.Text(), nullable=False),
        sa.Column("data_source_config", sa.Text(), nullable=False),
        sa.Column("testing_criteria", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_openai_evals")),
    )
    op.create_index(
        "ix_openai_evals_owner_created_at", "openai_evals", ["owner", "created_at"], unique=False
    )
    op.create_table(
        "openai_eval_runs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("eval_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=500), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("data_source", sa.Text(), nullable=False),
        sa.Column("metadata_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["eval_id"],
            ["openai_evals.id"],
            name=op.f("fk_openai_eval_runs_eval_id_openai_evals"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["id"], ["runs.id"], name=op.f("fk_openai_eval_runs_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_openai_eval_runs")),
    )
    op.create_index(
        "ix_openai_eval_runs_eval_id_created_at",
        "openai_eval_runs",
        ["eval_id", "created_at"],
        unique=False,
    )
    op.create_table(
        "openai_files",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=True),
        sa.Column("filename", sa.String(length=500), nullable=False),
        sa.Column("purpose", sa.String(length=32), nullable=False),
        sa.Column("bytes", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_openai_files")),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("openai_files")
    op.drop_index("ix_openai_eval_runs_eval_id_created_at", table_name="openai_eval_runs")
    op.drop_table("openai_eval_runs")
    op.drop_index("ix_openai_evals_owner_created_at", table_name="openai_evals")
    op.drop_table("openai_evals")
