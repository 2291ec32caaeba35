"""goodput says which window it covers: the steady-state window or the whole run

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03 13:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("request_logs", schema=None) as batch_op:
        # The logs before this one covered every tracked request: the whole run.
        batch_op.add_column(sa.Column("window", sa.Text(), nullable=False, server_default="total"))


def downgrade() -> None:
    with op.batch_alter_table("request_logs", schema=None) as batch_op:
        batch_op.drop_column("window")
