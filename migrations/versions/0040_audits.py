"""audits: rounds, nominations, ballots, and audits with their steps (rules §11.12)

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-06 22:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0040"
down_revision: str | None = "0039"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "audit_rounds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("quarter", sa.String(length=8), nullable=False),
        sa.Column("opened_at", _TZ, nullable=False),
        sa.Column("opened_by", sa.Text(), nullable=False),
        sa.Column("tallied_at", _TZ, nullable=True),
        sa.Column("tally", sa.JSON(), nullable=True),
        sa.Column("drawn_at", _TZ, nullable=True),
        sa.Column("roll", sa.Integer(), nullable=True),
        sa.Column("drawn_cohort", sa.String(length=16), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_rounds")),
        sa.UniqueConstraint("quarter", name=op.f("uq_audit_rounds_quarter")),
    )
    op.create_table(
        "audit_nominations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("public_id", sa.String(length=32), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("nominated_by", sa.Text(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"],
                                name=op.f("fk_audit_nominations_organization_id_organizations")),
        sa.ForeignKeyConstraint(["round_id"], ["audit_rounds.id"],
                                name=op.f("fk_audit_nominations_round_id_audit_rounds"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"],
                                name=op.f("fk_audit_nominations_submission_id_submissions"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_nominations")),
        sa.UniqueConstraint("public_id", name=op.f("uq_audit_nominations_public_id")),
    )  # fmt: skip
    op.create_table(
        "audit_ballots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("organization_id", sa.Integer(), nullable=False),
        sa.Column("ranking", sa.JSON(), nullable=False),
        sa.Column("cast_by", sa.Text(), nullable=False),
        sa.Column("at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(["organization_id"], ["organizations.id"],
                                name=op.f("fk_audit_ballots_organization_id_organizations")),
        sa.ForeignKeyConstraint(["round_id"], ["audit_rounds.id"],
                                name=op.f("fk_audit_ballots_round_id_audit_rounds"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_ballots")),
        sa.UniqueConstraint("round_id", "organization_id",
                            name=op.f("uq_audit_ballots_round_id")),
    )  # fmt: skip
    op.create_table(
        "audits",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("public_id", sa.String(length=32), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("way", sa.String(length=16), nullable=False),
        sa.Column("selected_at", _TZ, nullable=False),
        sa.Column("steps", sa.JSON(), nullable=False),
        sa.Column("auditor", sa.Text(), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("outcome_reason", sa.Text(), nullable=True),
        sa.Column("decided_at", _TZ, nullable=True),
        sa.ForeignKeyConstraint(["round_id"], ["audit_rounds.id"],
                                name=op.f("fk_audits_round_id_audit_rounds"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"],
                                name=op.f("fk_audits_submission_id_submissions"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audits")),
        sa.UniqueConstraint("public_id", name=op.f("uq_audits_public_id")),
    )  # fmt: skip


def downgrade() -> None:
    op.drop_table("audits")
    op.drop_table("audit_ballots")
    op.drop_table("audit_nominations")
    op.drop_table("audit_rounds")
