"""the public record: cohort releases, versioned publications, result-id scopes;
committee appointments and jurisdictions

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cohort_releases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cohort", sa.String(length=16), nullable=False),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("published_by", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cohort_releases")),
        sa.UniqueConstraint("cohort", name=op.f("uq_cohort_releases_cohort")),
    )
    # Cohorts published before releases were recorded: each had its publications.
    op.execute(
        "INSERT INTO cohort_releases (cohort, published_at, published_by) "
        "SELECT cohort, MIN(published_at), 'system' FROM publications GROUP BY cohort"
    )
    with op.batch_alter_table("publications", schema=None) as batch_op:
        batch_op.add_column(sa.Column("description", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("removed_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.drop_constraint("uq_publications_submission_id", type_="unique")
        batch_op.create_index(
            "ix_publications_submission_cohort", ["submission_id", "cohort"], unique=False
        )
    with op.batch_alter_table("result_entries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("scope", sa.String(length=180), nullable=True))
    # The scope is the prefix without its dataset (the last component).
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT id, prefix FROM result_entries")).all()
    for row_id, prefix in rows:
        bind.execute(
            sa.text("UPDATE result_entries SET scope = :scope WHERE id = :id"),
            {"scope": prefix.rsplit(".", 1)[0], "id": row_id},
        )
    with op.batch_alter_table("result_entries", schema=None) as batch_op:
        batch_op.alter_column("scope", existing_type=sa.String(length=180), nullable=False)
        batch_op.drop_constraint("uq_result_entries_prefix", type_="unique")
        batch_op.create_unique_constraint(op.f("uq_result_entries_scope"), ["scope", "entry"])
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("committee_appointed", sa.Boolean(), server_default="0", nullable=False)
        )
        batch_op.add_column(sa.Column("country", sa.String(length=2), nullable=True))
        batch_op.add_column(sa.Column("subdivision", sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.drop_column("subdivision")
        batch_op.drop_column("country")
        batch_op.drop_column("committee_appointed")
    with op.batch_alter_table("result_entries", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("uq_result_entries_scope"), type_="unique")
        batch_op.create_unique_constraint("uq_result_entries_prefix", ["prefix", "entry"])
        batch_op.drop_column("scope")
    with op.batch_alter_table("publications", schema=None) as batch_op:
        batch_op.drop_index("ix_publications_submission_cohort")
        batch_op.create_unique_constraint(
            "uq_publications_submission_id", ["submission_id", "cohort", "status"]
        )
        batch_op.drop_column("removed_at")
        batch_op.drop_column("description")
    op.drop_table("cohort_releases")
