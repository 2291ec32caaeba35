"""reachability checks of client-over-network endpoints (rules §11.10)

Revision ID: 0039
Revises: 0038
Create Date: 2026-12-06 21:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0039"
down_revision: str | None = "0038"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reachability_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("system_dir", sa.Text(), nullable=False),
        sa.Column("reachable", sa.Boolean(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("checked_on", sa.Date(), nullable=False),
        sa.Column("recorded_by", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_reachability_checks_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reachability_checks")),
    )
    with op.batch_alter_table("reachability_checks", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_reachability_checks_submission_id"), ["submission_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("reachability_checks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reachability_checks_submission_id"))
    op.drop_table("reachability_checks")
