"""fraud reports and their screenings (rules §11.5, SR §8.4)

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-06 20:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0036"
down_revision: str | None = "0035"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "fraud_reports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("public_id", sa.String(length=32), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("filed_by_id", sa.Integer(), nullable=False),
        sa.Column("allegation", sa.Text(), nullable=False),
        sa.Column("evidence", sa.Text(), nullable=False),
        sa.Column("filed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("decided_by", sa.Text(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["filed_by_id"], ["users.id"], name=op.f("fk_fraud_reports_filed_by_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_fraud_reports_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fraud_reports")),
        sa.UniqueConstraint("public_id", name=op.f("uq_fraud_reports_public_id")),
    )
    with op.batch_alter_table("fraud_reports", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_fraud_reports_submission_id"), ["submission_id"], unique=False
        )
    op.create_table(
        "fraud_screenings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("report_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("finding", sa.String(length=16), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["fraud_reports.id"],
            name=op.f("fk_fraud_screenings_report_id_fraud_reports"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_fraud_screenings_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fraud_screenings")),
        sa.UniqueConstraint("report_id", "user_id", name=op.f("uq_fraud_screenings_report_id")),
    )
    with op.batch_alter_table("fraud_screenings", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_fraud_screenings_report_id"), ["report_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("fraud_screenings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_fraud_screenings_report_id"))
    op.drop_table("fraud_screenings")
    with op.batch_alter_table("fraud_reports", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_fraud_reports_submission_id"))
    op.drop_table("fraud_reports")
