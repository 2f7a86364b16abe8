"""What each case cost as a column: ``results.cost_usd``.

Every role's cost together, when known, so that a run's spending (its ``budget_usd``) is one
sum over its results; filled in for the results already stored.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 14:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cost_usd", sa.Float(), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        # PostgreSQL's json functions refuse a document holding an escaped NUL (an answer
        # may hold one): turned into \u0001 first, which keeps the JSON valid either way.
        parsed = "(replace(record, '\\u0000', '\\u0001')::json -> 'cost_usd')"
        role = f"({parsed} ->> '{{role}}')::float8"
    else:
        role = "json_extract(record, '$.cost_usd.{role}')"
    candidate, judge = role.format(role="candidate"), role.format(role="judge")
    total = (
        f"CASE WHEN {candidate} IS NULL AND {judge} IS NULL THEN NULL "
        f"ELSE COALESCE({candidate}, 0) + COALESCE({judge}, 0) END"
    )
    op.execute(f"UPDATE results SET cost_usd = {total}")


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_column("cost_usd")
