"""audit nominations of every kind: the committee's, reproducibility (screened), the
chairs' new accelerators (rules §11.12, SR §10.4)

Revision ID: 0042
Revises: 0041
Create Date: 2026-12-07 00:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0042"
down_revision: str | None = "0041"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("audit_nominations", schema=None) as batch_op:
        batch_op.alter_column("organization_id", existing_type=sa.Integer(), nullable=True)
        batch_op.add_column(
            sa.Column("kind", sa.String(length=16), server_default="committee", nullable=False)
        )
        batch_op.add_column(
            sa.Column("state", sa.String(length=16), server_default="on-slate", nullable=False)
        )
        batch_op.add_column(sa.Column("points", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("reproduction", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("deviation", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("rule_cited", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("screenings", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("decided_by", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("decision_reason", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audit_nominations", schema=None) as batch_op:
        for name in ("decision_reason", "decided_at", "decided_by", "screenings", "rule_cited",
                     "deviation", "reproduction", "points", "state", "kind"):  # fmt: skip
            batch_op.drop_column(name)
        batch_op.alter_column("organization_id", existing_type=sa.Integer(), nullable=False)
