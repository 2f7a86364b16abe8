"""Requests per role as columns: ``results.candidate_calls`` and ``judge_calls``.

Each record's ``attempts``, so that the /v1 run object counts them without reading records;
filled in for the results already stored.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 05:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROLES = ("candidate", "judge")


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("results", schema=None) as batch_op:
        for role in ROLES:
            batch_op.add_column(
                sa.Column(f"{role}_calls", sa.Integer(), nullable=False, server_default="0")
            )
    if op.get_bind().dialect.name == "postgresql":
        # PostgreSQL's json functions refuse a document holding an escaped NUL (an answer
        # may hold one): turned into \u0001 first, which keeps the JSON valid either way.
        parsed = "replace(record, '\\u0000', '\\u0001')::json"
        read = f"COALESCE((({parsed}) -> 'attempts' ->> '{{role}}')::integer, 0)"
    else:
        read = "COALESCE(json_extract(record, '$.attempts.{role}'), 0)"
    assignments = ", ".join(f"{role}_calls = {read.format(role=role)}" for role in ROLES)
    op.execute(f"UPDATE results SET {assignments}")


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("results", schema=None) as batch_op:
        for role in ROLES:
            batch_op.drop_column(f"{role}_calls")
