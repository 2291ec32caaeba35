"""reclassifications: the chair moves a result to another division or a lower
publication status (rules §11.4–§11.6, §8.4)

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-06 20:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0035"
down_revision: str | None = "0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reclassifications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("division", sa.String(length=16), nullable=True),
        sa.Column("availability", sa.String(length=16), nullable=True),
        sa.Column("available_by", sa.Date(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("decided_by", sa.Text(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("objection_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["objection_id"],
            ["objections.id"],
            name=op.f("fk_reclassifications_objection_id_objections"),
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_reclassifications_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reclassifications")),
    )
    with op.batch_alter_table("reclassifications", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_reclassifications_submission_id"), ["submission_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("reclassifications", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reclassifications_submission_id"))
    op.drop_table("reclassifications")
