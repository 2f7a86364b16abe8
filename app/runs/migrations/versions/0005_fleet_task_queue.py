"""Cases are executed by a task queue (PostgreSQL) instead of run leases; fleet-wide limits.

Drops ``runs.lease_holder`` and ``lease_until``; adds ``fleet_limits`` and ``fleet_slots``
(concurrency limits shared by every worker on the database); on PostgreSQL installs
pgqueuer's schema (its queue, log and statistics tables, and the NOTIFY trigger).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 14:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.runs.postgres.jobs import install_queue_schema, uninstall_queue_schema

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("lease_until")
        batch_op.drop_column("lease_holder")
    op.create_table(
        "fleet_limits",
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("current_limit", sa.Integer(), nullable=False),
        sa.Column("max_limit", sa.Integer(), nullable=False),
        sa.Column("successes", sa.Integer(), nullable=False),
        sa.Column("rate_limited_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_fleet_limits")),
    )
    op.create_table(
        "fleet_slots",
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=200), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["key"],
            ["fleet_limits.key"],
            name=op.f("fk_fleet_slots_key_fleet_limits"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("key", "slot", name=op.f("pk_fleet_slots")),
    )
    op.create_index("ix_fleet_slots_holder", "fleet_slots", ["holder"], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        install_queue_schema(op.get_bind())


def downgrade() -> None:
    """Revert this revision."""
    if op.get_bind().dialect.name == "postgresql":
        uninstall_queue_schema(op.get_bind())
    op.drop_index("ix_fleet_slots_holder", table_name="fleet_slots")
    op.drop_table("fleet_slots")
    op.drop_table("fleet_limits")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("lease_holder", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
