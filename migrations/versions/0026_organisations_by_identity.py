"""organisations by identity: each name's normalised form is unique, and an invitation
names the organisation its holder joins

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-06 12:00:00
"""

import re
import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _key(name: str) -> str:
    # The normalised form as this revision defines it (app.core.names.organisation_key).
    folded = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", folded).split())


def upgrade() -> None:
    # Added in place, nullable: SQLite would otherwise copy a table others refer to. The
    # portal always writes the form, and a unique index keeps it one per organisation.
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name_key", sa.String(200), nullable=True))
    connection = op.get_bind()
    rows = connection.execute(sa.text("SELECT id, name FROM organizations ORDER BY id")).all()
    taken: set[str] = set()
    for org_id, name in rows:
        key = _key(name)
        # Two organisations already spelled alike stay two: the later one's form says so.
        if key in taken:
            key = f"{key} #{org_id}"
        taken.add(key)
        connection.execute(
            sa.text("UPDATE organizations SET name_key = :key WHERE id = :id"),
            {"key": key, "id": org_id},
        )
    op.create_index("ix_organizations_name_key", "organizations", ["name_key"], unique=True)
    with op.batch_alter_table("invitations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("organization_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_invitations_organization_id", "organizations", ["organization_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("invitations", schema=None) as batch_op:
        batch_op.drop_constraint("fk_invitations_organization_id", type_="foreignkey")
        batch_op.drop_column("organization_id")
    op.drop_index("ix_organizations_name_key", table_name="organizations")
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.drop_column("name_key")
