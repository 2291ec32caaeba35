"""review policies: each policy in force by digest, named by decisions and versions of
the record (rules §15)

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-06 21:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0038"
down_revision: str | None = "0037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "review_policies",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("values", sa.JSON(), nullable=False),
        sa.Column("first_in_force_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("digest", name=op.f("pk_review_policies")),
    )
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("policy_digest", sa.String(length=64), nullable=True))
    with op.batch_alter_table("publications", schema=None) as batch_op:
        batch_op.add_column(sa.Column("policy_digest", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("publications", schema=None) as batch_op:
        batch_op.drop_column("policy_digest")
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_column("policy_digest")
    op.drop_table("review_policies")
