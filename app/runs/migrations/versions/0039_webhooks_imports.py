"""Webhook deliveries, and runs imported from another Evals API (issue 39).

``webhook_deliveries``: one row per event and endpoint, kept until delivered or given up.
``openai_eval_runs.imported``: the source's run object of an imported (read-only) run;
``openai_imported_items``: its output items as the source gave them.

Revision ID: 0039
Revises: 0012
Create Date: 2026-11-27 06:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0039"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("endpoint", sa.String(length=100), nullable=False),
        sa.Column("event_id", sa.String(length=40), nullable=False),
        sa.Column("event_type", sa.String(length=40), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=True),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    op.create_index(
        "ix_webhook_deliveries_status_next_attempt_at",
        "webhook_deliveries",
        ["status", "next_attempt_at"],
        unique=False,
    )
    op.create_index(
        "ix_webhook_deliveries_created_at_id",
        "webhook_deliveries",
        ["created_at", "id"],
        unique=False,
    )

    op.add_column("openai_eval_runs", sa.Column("imported", sa.Text(), nullable=True))
    op.create_table(
        "openai_imported_items",
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name=op.f("fk_openai_imported_items_run_id_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "seq", name=op.f("pk_openai_imported_items")),
        sa.UniqueConstraint("run_id", "item_id", name="uq_openai_imported_items_run_id_item_id"),
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_table("openai_imported_items")
    with op.batch_alter_table("openai_eval_runs") as batch:
        batch.drop_column("imported")
    op.drop_index("ix_webhook_deliveries_created_at_id", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_status_next_attempt_at", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
