"""the newer summary fields and each accuracy entry of a point

input_sequence_lengths, early_stopping_percentiles and run_config from the summary, and
the accuracy file's entries with what the gate compared (app.core.run_summary,
app.core.accuracy). Points checked before this one have none until checked again.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-05 08:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("input_sequence_lengths", "early_stopping", "run_config", "accuracy_detail")


def upgrade() -> None:
    with op.batch_alter_table("points", schema=None) as batch_op:
        for name in COLUMNS:
            batch_op.add_column(sa.Column(name, sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("points", schema=None) as batch_op:
        for name in reversed(COLUMNS):
            batch_op.drop_column(name)
