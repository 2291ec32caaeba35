"""a published result's standing: Preview dates and extensions, the scenario, estimated
power, and the record's entry for a Preview removed at expiry

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-06 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("systems", schema=None) as batch_op:
        batch_op.add_column(sa.Column("target_availability_date", sa.Date(), nullable=True))
        batch_op.add_column(sa.Column("power_estimates", sa.JSON(), nullable=True))
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("scenario", sa.String(length=8), nullable=True))
        batch_op.add_column(
            sa.Column("preview_expired_at", sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("preview_notices", sa.JSON(), nullable=True))
    with op.batch_alter_table("published_curves", schema=None) as batch_op:
        batch_op.add_column(sa.Column("scenario", sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column("available_by", sa.Date(), nullable=True))
        batch_op.add_column(
            sa.Column("power_estimated", sa.Boolean(), nullable=False, server_default="0")
        )
    op.create_table(
        "preview_extensions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "submission_id",
            sa.Integer(),
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
            unique=True,
        ),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("asked_by_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=True),
        sa.Column("new_date", sa.Date(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decided_by_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=True),
        sa.Column("granted", sa.Boolean(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("preview_extensions")
    with op.batch_alter_table("published_curves", schema=None) as batch_op:
        batch_op.drop_column("power_estimated")
        batch_op.drop_column("available_by")
        batch_op.drop_column("scenario")
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.drop_column("preview_notices")
        batch_op.drop_column("preview_expired_at")
        batch_op.drop_column("scenario")
    with op.batch_alter_table("systems", schema=None) as batch_op:
        batch_op.drop_column("power_estimates")
        batch_op.drop_column("target_availability_date")
