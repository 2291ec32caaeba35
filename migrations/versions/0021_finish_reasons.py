"""how a point's responses ended (the summary's finish_reason_counts)

Points checked before this one have none until they are checked again, as points of
older summaries have none.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-04 06:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("points", schema=None) as batch_op:
        batch_op.add_column(sa.Column("finish_reason_counts", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("points", schema=None) as batch_op:
        batch_op.drop_column("finish_reason_counts")
