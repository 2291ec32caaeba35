"""a submission may have more than one dispute: late objections after finalization are
handled by a dispute of their own (rules §11.5, §11.6)

Revision ID: 0043
Revises: 0042
Create Date: 2026-12-07 00:40:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0043"
down_revision: str | None = "0042"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("disputes", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_disputes_submission_id"), type_="unique")
        batch_op.create_index(
            batch_op.f("ix_disputes_submission_id"), ["submission_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("disputes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_disputes_submission_id"))
        batch_op.create_unique_constraint(
            batch_op.f("uq_disputes_submission_id"), ["submission_id"]
        )
