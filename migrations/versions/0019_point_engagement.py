"""a point's engaged part of the system, where nodes_used engages fewer nodes (§4.5.3)

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-04 02:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Points checked before this one ran on the whole system as far as the portal knew:
    # null, the whole system, until they are checked again.
    with op.batch_alter_table("points", schema=None) as batch_op:
        batch_op.add_column(sa.Column("engaged_share", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("accelerators_engaged", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("points", schema=None) as batch_op:
        batch_op.drop_column("accelerators_engaged")
        batch_op.drop_column("engaged_share")
