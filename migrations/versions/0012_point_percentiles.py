"""points keep their summary's P50/P90/P95/P99 of TTFT, TPOT and latency

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 21:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("points", schema=None) as batch_op:
        batch_op.add_column(sa.Column("percentiles", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("points", schema=None) as batch_op:
        batch_op.drop_column("percentiles")
