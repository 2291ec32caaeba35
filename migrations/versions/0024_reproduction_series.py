"""several runs of a point asked for at once: each names the first of its series

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-05 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("reproductions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("series_of", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_reproductions_series_of", "reproductions", ["series_of"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("reproductions", schema=None) as batch_op:
        batch_op.drop_constraint("fk_reproductions_series_of", type_="foreignkey")
        batch_op.drop_column("series_of")
