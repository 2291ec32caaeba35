"""disputes: certification, panel, statements, recommendation, ruling, appeal (rules §11.6)

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-06 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0037"
down_revision: str | None = "0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "disputes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("certified_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("certified_by", sa.Text(), nullable=True),
        sa.Column("panel", sa.JSON(), nullable=False),
        sa.Column("convened_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("recommendation", sa.String(length=16), nullable=True),
        sa.Column("recommendation_note", sa.Text(), nullable=True),
        sa.Column("recommended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("extended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ruling", sa.String(length=16), nullable=True),
        sa.Column("ruling_reason", sa.Text(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("appealed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("appealed_by", sa.Text(), nullable=True),
        sa.Column("appeal_reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_disputes_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_disputes")),
        sa.UniqueConstraint("submission_id", name=op.f("uq_disputes_submission_id")),
    )
    op.create_table(
        "dispute_statements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dispute_id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("party", sa.String(length=16), nullable=False),
        sa.Column("author", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["dispute_id"],
            ["disputes.id"],
            name=op.f("fk_dispute_statements_dispute_id_disputes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_dispute_statements_organization_id_organizations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dispute_statements")),
    )
    with op.batch_alter_table("dispute_statements", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_dispute_statements_dispute_id"), ["dispute_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("dispute_statements", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_dispute_statements_dispute_id"))
    op.drop_table("dispute_statements")
    op.drop_table("disputes")
