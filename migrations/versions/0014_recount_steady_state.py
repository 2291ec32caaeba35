"""re-counts keep their point's steady-state analysis (harness/steady_state.py)

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 06:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("retokenizations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("steady_state", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("retokenizations", schema=None) as batch_op:
        batch_op.drop_column("steady_state")
