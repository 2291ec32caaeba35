"""the publications removed from the record, indexed: the public read path names the
record it serves by the newest publication and the count of removed ones, on every
request

Revision ID: 0044
Revises: 0043
Create Date: 2026-12-07 16:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0044"
down_revision: str | None = "0043"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("publications", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_publications_removed_at"), ["removed_at"])


def downgrade() -> None:
    with op.batch_alter_table("publications", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_publications_removed_at"))
