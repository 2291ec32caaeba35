"""a point's Offline kind is one of the domain's enum values: a VARCHAR like the other
enum columns (it was TEXT)

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("points", schema=None) as batch_op:
        batch_op.alter_column(
            "offline_kind",
            existing_type=sa.Text(),
            type_=sa.String(length=16),
            existing_nullable=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("points", schema=None) as batch_op:
        batch_op.alter_column(
            "offline_kind",
            existing_type=sa.String(length=16),
            type_=sa.Text(),
            existing_nullable=False,
        )
