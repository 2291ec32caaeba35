"""a large point's re-count split across workers: part jobs wait under the point's job

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_jobs_parent_id"), ["parent_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_jobs_parent_id_jobs"), "jobs", ["parent_id"], ["id"]
        )
    op.create_table(
        "recount_parts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("retokenization_id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("parts", sa.Integer(), nullable=False),
        sa.Column("block_lines", sa.Integer(), nullable=False),
        sa.Column("counts_sha256", sa.String(length=64), nullable=True),
        sa.Column("responses", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_recount_parts_job_id_jobs")),
        sa.ForeignKeyConstraint(
            ["retokenization_id"],
            ["retokenizations.id"],
            name=op.f("fk_recount_parts_retokenization_id_retokenizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recount_parts")),
        sa.UniqueConstraint(
            "retokenization_id", "part", name=op.f("uq_recount_parts_retokenization_id")
        ),
    )
    with op.batch_alter_table("recount_parts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_recount_parts_retokenization_id"), ["retokenization_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("recount_parts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_recount_parts_retokenization_id"))
    op.drop_table("recount_parts")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_jobs_parent_id_jobs"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_jobs_parent_id"))
        batch_op.drop_column("parent_id")
