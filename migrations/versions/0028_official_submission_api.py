"""the official Submission API: measured runs, submissions registered from runs, the
grants behind signed URLs, and test submissions

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-06 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _when(name: str, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "measured_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("public_id", sa.String(32), nullable=False),
        sa.Column(
            "organization_id", sa.Integer(), sa.ForeignKey("organizations.id"), nullable=False
        ),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("model", sa.Text(), nullable=True),
        sa.Column("concurrency", sa.BigInteger(), nullable=True),
        sa.Column("benchmark_version", sa.Text(), nullable=False),
        sa.Column("cli_version", sa.String(32), nullable=True),
        _when("started_at", False),
        _when("finished_at", False),
        _when("expires_at"),
        sa.Column("pinned", sa.Boolean(), nullable=False),
        sa.Column("is_test", sa.Boolean(), nullable=False),
        sa.Column("system_info", sa.JSON(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("result_summary", sa.JSON(), nullable=False),
        sa.Column("point_config", sa.JSON(), nullable=False),
        sa.Column("system_power", sa.JSON(), nullable=True),
        sa.Column("archive_id", sa.Integer(), sa.ForeignKey("stored_files.id"), nullable=True),
        _when("created_at", False),
        sa.UniqueConstraint("public_id", name=op.f("uq_measured_runs_public_id")),
    )
    op.create_index(op.f("ix_measured_runs_organization_id"), "measured_runs", ["organization_id"])
    op.create_table(
        "api_submissions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("public_id", sa.String(32), nullable=False),
        sa.Column(
            "organization_id", sa.Integer(), sa.ForeignKey("organizations.id"), nullable=False
        ),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("division", sa.String(32), nullable=False),
        sa.Column("scenario", sa.String(8), nullable=False),
        sa.Column("availability", sa.String(32), nullable=False),
        sa.Column("early_publish", sa.Boolean(), nullable=False),
        _when("embargo_at"),
        sa.Column("target_availability_date", sa.Date(), nullable=True),
        sa.Column("is_test", sa.Boolean(), nullable=False),
        sa.Column("cli_version", sa.String(32), nullable=True),
        sa.Column("submission_id", sa.Integer(), sa.ForeignKey("submissions.id"), nullable=True),
        sa.Column("refused_code", sa.String(64), nullable=True),
        sa.Column("refused_message", sa.Text(), nullable=True),
        _when("withdrawn_at"),
        _when("created_at", False),
        sa.UniqueConstraint("public_id", name=op.f("uq_api_submissions_public_id")),
        sa.UniqueConstraint("submission_id", name=op.f("uq_api_submissions_submission_id")),
    )
    op.create_index(
        op.f("ix_api_submissions_organization_id"), "api_submissions", ["organization_id"]
    )
    op.create_table(
        "api_submission_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "api_submission_id",
            sa.Integer(),
            sa.ForeignKey("api_submissions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("measured_runs.id"), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        _when("removed_at"),
    )
    op.create_index(
        op.f("ix_api_submission_runs_api_submission_id"),
        "api_submission_runs",
        ["api_submission_id"],
    )
    op.create_index(op.f("ix_api_submission_runs_run_id"), "api_submission_runs", ["run_id"])
    op.create_table(
        "transfer_grants",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("public_id", sa.String(32), nullable=False),
        sa.Column("direction", sa.String(8), nullable=False),
        sa.Column("subject", sa.String(16), nullable=False),
        sa.Column("subject_id", sa.String(32), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=True),
        sa.Column("staging_key", sa.Text(), nullable=True),
        _when("expires_at", False),
        _when("used_at"),
        sa.Column("outcome", sa.Text(), nullable=True),
        sa.Column("job_id", sa.Integer(), sa.ForeignKey("jobs.id"), nullable=True),
        _when("created_at", False),
        sa.UniqueConstraint("public_id", name=op.f("uq_transfer_grants_public_id")),
    )
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("is_test", sa.Boolean(), server_default="0", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.drop_column("is_test")
    op.drop_table("transfer_grants")
    op.drop_index(op.f("ix_api_submission_runs_run_id"), table_name="api_submission_runs")
    op.drop_index(
        op.f("ix_api_submission_runs_api_submission_id"), table_name="api_submission_runs"
    )
    op.drop_table("api_submission_runs")
    op.drop_index(op.f("ix_api_submissions_organization_id"), table_name="api_submissions")
    op.drop_table("api_submissions")
    op.drop_index(op.f("ix_measured_runs_organization_id"), table_name="measured_runs")
    op.drop_table("measured_runs")
