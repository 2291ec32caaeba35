"""the record's ledger: signed, hash-chained entries of every change to the public record,
and the public keys that signed them

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-06 17:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "record_entries",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("subject", sa.String(length=200), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("key_id", sa.String(length=32), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("signature", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_record_entries")),
        sa.UniqueConstraint("digest", name=op.f("uq_record_entries_digest")),
    )
    with op.batch_alter_table("record_entries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_record_entries_subject"), ["subject"], unique=False)
    op.create_table(
        "signing_keys",
        sa.Column("key_id", sa.String(length=32), nullable=False),
        sa.Column("algorithm", sa.String(length=16), nullable=False),
        sa.Column("public_pem", sa.Text(), nullable=False),
        sa.Column("first_used_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key_id", name=op.f("pk_signing_keys")),
    )


def downgrade() -> None:
    op.drop_table("signing_keys")
    with op.batch_alter_table("record_entries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_record_entries_subject"))
    op.drop_table("record_entries")
