"""each published curve's disclosed facets (precision, accelerator memory, interconnect,
serving software, nodes), for the explorer's metadata filters

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-06 14:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 500


def upgrade() -> None:
    with op.batch_alter_table("published_curves", schema=None) as batch_op:
        batch_op.add_column(sa.Column("facts", sa.JSON(), nullable=True))
    # The curves already published get their facets from what their submission disclosed
    # at intake and from its systems' record, by the code that writes new ones.
    from app.publishing.domain.facts import curve_facts

    bind = op.get_bind()
    curves = sa.table(
        "published_curves",
        sa.column("id", sa.Integer),
        sa.column("publication_id", sa.Integer),
        sa.column("data", sa.JSON),
        sa.column("facts", sa.JSON),
    )
    publications = sa.table(
        "publications", sa.column("id", sa.Integer), sa.column("submission_id", sa.Integer)
    )
    submissions = sa.table(
        "submissions", sa.column("id", sa.Integer), sa.column("disclosed", sa.JSON)
    )
    systems = sa.table(
        "systems",
        sa.column("submission_id", sa.Integer),
        sa.column("dir_name", sa.Text),
        sa.column("node_count", sa.BigInteger),
        sa.column("serving_framework", sa.Text),
    )
    last = 0
    while True:
        rows = bind.execute(
            sa.select(
                curves.c.id,
                curves.c.data,
                submissions.c.id.label("submission"),
                submissions.c.disclosed,
            )  # fmt: skip
            .join(publications, publications.c.id == curves.c.publication_id)
            .join(submissions, submissions.c.id == publications.c.submission_id)
            .where(curves.c.id > last)
            .order_by(curves.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        owners = {row.submission for row in rows}
        known = {
            (s.submission_id, s.dir_name): s
            for s in bind.execute(sa.select(systems).where(systems.c.submission_id.in_(owners)))
        }
        updates = []
        for row in rows:
            system_dir = (row.data or {}).get("system_dir", "")
            declared = ((row.disclosed or {}).get("systems") or {}).get(system_dir) or {}
            system = known.get((row.submission, system_dir))
            facts = curve_facts(
                declared.get("fields") or {},
                system.node_count if system is not None else None,
                system.serving_framework if system is not None else None,
            )
            updates.append({"curve": row.id, "facts": facts})
        bind.execute(curves.update().where(curves.c.id == sa.bindparam("curve")), updates)
        last = rows[-1].id


def downgrade() -> None:
    with op.batch_alter_table("published_curves", schema=None) as batch_op:
        batch_op.drop_column("facts")
