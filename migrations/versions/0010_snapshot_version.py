"""published curves carry the version of their snapshot schema (every stored one is 1)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 20:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("published_curves", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("snapshot_version", sa.Integer(), server_default="1", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("published_curves", schema=None) as batch_op:
        batch_op.drop_column("snapshot_version")
