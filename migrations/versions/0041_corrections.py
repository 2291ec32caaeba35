"""corrections of a submission's non-result content (rules §11.7)

Revision ID: 0041
Revises: 0040
Create Date: 2026-12-06 23:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0041"
down_revision: str | None = "0040"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "corrections",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("public_id", sa.String(length=32), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("archive_id", sa.Integer(), nullable=False),
        sa.Column("archive_format", sa.String(length=16), nullable=False),
        sa.Column("bundle_root", sa.Text(), nullable=False),
        sa.Column("bundle_submission_id", sa.Text(), nullable=True),
        sa.Column("content_digest", sa.String(length=64), nullable=False),
        sa.Column("disclosed", sa.JSON(), nullable=True),
        sa.Column("changed_files", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("filed_by", sa.Text(), nullable=False),
        sa.Column("filed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("after_finalization", sa.Boolean(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=True),
        sa.Column("decided_by", sa.Text(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("applied_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["archive_id"], ["stored_files.id"], name=op.f("fk_corrections_archive_id_stored_files")
        ),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_corrections_job_id_jobs")),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_corrections_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_corrections")),
        sa.UniqueConstraint("public_id", name=op.f("uq_corrections_public_id")),
    )
    with op.batch_alter_table("corrections", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_corrections_submission_id"), ["submission_id"], unique=False
        )
        # One undecided correction per submission.
        undecided = sa.text("state IN ('approved', 'checking', 'requested')")
        batch_op.create_index(
            "uq_corrections_undecided", ["submission_id"], unique=True,
            sqlite_where=undecided, postgresql_where=undecided,
        )  # fmt: skip


def downgrade() -> None:
    with op.batch_alter_table("corrections", schema=None) as batch_op:
        batch_op.drop_index("uq_corrections_undecided")
        batch_op.drop_index(batch_op.f("ix_corrections_submission_id"))
    op.drop_table("corrections")
