"""Webhook endpoints registered through the API: ``webhook_endpoints`` (issue 39).

Endpoints of ``EVAL_WEBHOOKS`` stay settings; these are rows, each with its owner (the
caller who registered it), URL, events and its signing secret sealed with the operator's
``EVAL_WEBHOOK_SECRETS_KEY`` (never stored in the clear).

Revision ID: 0041_39
Revises: 0040_39
Create Date: 2026-11-27 09:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0041_39"
down_revision: str | None = "0040_39"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=True),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("description", sa.String(length=500), nullable=True),
        sa.Column("events", sa.String(length=500), nullable=False),
        sa.Column("sealed_secret", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_endpoints")),
    )
    op.create_index("ix_webhook_endpoints_owner", "webhook_endpoints", ["owner"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_webhook_endpoints_owner", table_name="webhook_endpoints")
    op.drop_table("webhook_endpoints")
