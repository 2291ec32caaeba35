"""extracted bundles are a cache of the store's archives; jobs count their waits for it

A submission's ``bundle_root`` was its folder under the data directory
(``bundles/<upload id>/<folder in the archive>``); it is now the folder inside the
extracted archive, which each host extracts from the artifact store into its own cache.
A job waiting for the store to come back counts its tries in ``store_waits``.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-04 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_submissions = sa.table(
    "submissions", sa.column("id", sa.Integer), sa.column("bundle_root", sa.Text)
)


def upgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("store_waits", sa.Integer(), nullable=False, server_default="0")
        )
    bind = op.get_bind()
    for row in bind.execute(sa.select(_submissions.c.id, _submissions.c.bundle_root)).all():
        parts = (row.bundle_root or "").split("/")
        if len(parts) >= 2 and parts[0] == "bundles":
            inner = "/".join(parts[2:])
            bind.execute(
                _submissions.update().where(_submissions.c.id == row.id).values(bundle_root=inner)
            )


def downgrade() -> None:
    # The old per-upload folders are not made again: a downgraded portal needs the
    # bundles it extracted itself (or the uploads again).
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("store_waits")
