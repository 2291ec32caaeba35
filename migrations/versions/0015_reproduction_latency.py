"""reproductions know whether they re-ran the same system, and keep their latency comparison

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 07:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("reproductions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("same_system", sa.Boolean(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("margin", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("latency", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("reproductions", schema=None) as batch_op:
        batch_op.drop_column("latency")
        batch_op.drop_column("margin")
        batch_op.drop_column("same_system")
