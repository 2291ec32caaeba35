"""each published curve's points packed as numbers, for reading a large record quickly

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-06 11:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 500


def upgrade() -> None:
    with op.batch_alter_table("published_curves", schema=None) as batch_op:
        batch_op.add_column(sa.Column("point_table", sa.LargeBinary(), nullable=True))
    # The packing is derived from each snapshot alone, by the code that reads it: packing
    # the stored curves now spares the first reader after the upgrade. A curve left
    # unpacked (or packed in a format a later reader does not know) is packed on reading.
    from app.publishing.domain.point_table import pack
    from app.publishing.domain.snapshot import read_snapshot

    bind = op.get_bind()
    curves = sa.table(
        "published_curves",
        sa.column("id", sa.Integer),
        sa.column("data", sa.JSON),
        sa.column("snapshot_version", sa.Integer),
        sa.column("point_table", sa.LargeBinary),
    )
    last = 0
    while True:
        rows = bind.execute(
            sa.select(curves.c.id, curves.c.data, curves.c.snapshot_version)
            .where(curves.c.id > last)
            .order_by(curves.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        bind.execute(
            curves.update().where(curves.c.id == sa.bindparam("curve")),
            [
                {"curve": id_, "point_table": pack(read_snapshot(version, data))}
                for id_, data, version in rows
            ],
        )
        last = rows[-1].id


def downgrade() -> None:
    with op.batch_alter_table("published_curves", schema=None) as batch_op:
        batch_op.drop_column("point_table")
