"""Migrations create exactly the schema the models describe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from app.db.migrate import upgrade
from app.db.models import Base
from app.db.session import Database
from app.publishing.domain.facts import curve_facts
from app.publishing.domain.point_table import pack
from app.publishing.domain.snapshot import CurveSnapshot, PublishedPoint, read_snapshot

# PostgreSQL too: the migrations are DDL, which each database takes its own way.
pytestmark = pytest.mark.postgresql


def test_migrations_match_the_models(database: Database) -> None:
    with database.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": False})
        assert compare_metadata(context, Base.metadata) == []


def test_sqlite_enforces_foreign_keys_and_uses_wal(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'p.sqlite3'}")
    with database.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def _an_organisation_and_an_archive(connection: sa.Connection) -> None:
    """Rows as every schema since the first has them: organisation 1 and archive 1."""
    connection.execute(sa.text(
        "INSERT INTO organizations (slug, name, created_at, committee_appointed) "
        "VALUES ('acme', 'Acme', '2026-11-01 00:00:00', 0)"
    ))  # fmt: skip
    connection.execute(sa.text(
        "INSERT INTO stored_files (sha256, size, kind, created_at) "
        f"VALUES ('{'ab' * 32}', 1, 'archive', '2026-11-01 00:00:00')"
    ))  # fmt: skip


def test_stored_bundle_folders_become_folders_inside_the_extracted_archive(
    tmp_path: Path,
) -> None:
    """0020: ``bundles/<upload id>/<folder>`` (under the data dir) becomes ``<folder>``,
    the folder inside the archive each host extracts from the store."""
    url = f"sqlite:///{tmp_path / 'p.sqlite3'}"
    upgrade(url, "0019")
    engine = sa.create_engine(url)
    # Rows as the 0019 schema has them (the models have grown since).
    with engine.begin() as connection:
        _an_organisation_and_an_archive(connection)
        for n, root in enumerate(["bundles/0f1e/Acme/sub-1", "bundles/9a8b", "Acme/x"]):
            connection.execute(
                sa.text(
                    "INSERT INTO submissions (public_id, organization_id, archive_id, "
                    "archive_format, original_filename, bundle_submission_id, bundle_root, "
                    "content_digest, state, for_review, publication_mode, penalty_cohorts, "
                    "uploaded_at) VALUES (:pid, 1, 1, 'tar.gz', 'a.tar.gz', 'sub-1', :root, "
                    "'d', 'received', 1, 'confidential', 0, '2026-11-01 00:00:00')"
                ),
                {"pid": f"{n:032d}", "root": root},
            )
    upgrade(url)
    with engine.connect() as connection:
        roots = connection.execute(sa.text("SELECT bundle_root FROM submissions ORDER BY id"))
        assert [r for (r,) in roots] == ["Acme/sub-1", "", "Acme/x"]
        waits = connection.execute(sa.text("SELECT store_waits FROM jobs")).all()
        assert waits == []
    engine.dispose()


def _a_snapshot() -> CurveSnapshot:
    return CurveSnapshot(
        system="S", system_dir="S1", benchmark_model="m", dataset="d", is_agentic=False,
        x_metric="tps_per_user", c_max=None, c_min=None, regions=None,
        points=[PublishedPoint(dir=f"r{c}", concurrency=c, system_tps=100.0 * c,
                               tps_per_user=90.0 / c, region="med_concurrency")
                for c in (1, 2, 4)],
        step_line=[], frontier=[], offline_ceiling=None, elected_offline=None,
    )  # fmt: skip


def _a_published_submission(connection: sa.Connection, disclosed: object = None) -> None:
    """A finalized submission (what it disclosed, as intake kept it) and its publication."""
    _an_organisation_and_an_archive(connection)
    connection.execute(
        sa.text(
            "INSERT INTO submissions (public_id, organization_id, archive_id, archive_format, "
            "original_filename, bundle_submission_id, bundle_root, content_digest, state, "
            "for_review, publication_mode, penalty_cohorts, uploaded_at, disclosed) VALUES "
            "('p1', 1, 1, 'tar.gz', 'a.tar.gz', 'sub-1', 'Acme/sub-1', 'd', 'finalized', 1, "
            "'confidential', 0, '2026-11-01 00:00:00', :disclosed)"
        ),
        {"disclosed": None if disclosed is None else json.dumps(disclosed)},
    )
    connection.execute(sa.text(
        "INSERT INTO publications (submission_id, cohort, status, published_at) "
        "VALUES (1, '2026-11-C0', 'verified', '2026-11-01 00:00:00')"
    ))  # fmt: skip


def _a_published_curve(connection: sa.Connection, curve: CurveSnapshot, version: int) -> None:
    connection.execute(
        sa.text(
            "INSERT INTO published_curves (publication_id, benchmark_model, dataset, "
            "is_agentic, system_name, organization, data, snapshot_version, "
            "power_estimated) VALUES (1, 'm', 'd', 0, 'S', 'Acme', :data, :v, 0)"
        ),
        {"data": json.dumps(curve.stored()), "v": version},
    )


def test_published_curves_are_packed_for_the_explorer(tmp_path: Path) -> None:
    """0030: each curve published before it gets its points packed, as publishing packs
    them now; a curve whose snapshot reads as version 1 is packed as read."""
    url = f"sqlite:///{tmp_path / 'p.sqlite3'}"
    upgrade(url, "0029")
    curve = _a_snapshot()
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        _a_published_submission(connection)
        for version in (1, 2):
            _a_published_curve(connection, curve, version)
    upgrade(url, "0030")
    with engine.connect() as connection:
        packed = connection.execute(
            sa.text("SELECT point_table FROM published_curves ORDER BY id")
        ).scalars()
        assert list(packed) == [pack(read_snapshot(2, curve.stored()))] * 2
    engine.dispose()


def test_published_curves_get_the_facets_their_submission_disclosed(tmp_path: Path) -> None:
    """0031: a curve published before it gets its facets from what its submission
    disclosed at intake and its system's record, as publishing writes them now."""
    url = f"sqlite:///{tmp_path / 'f.sqlite3'}"
    upgrade(url, "0030")
    fields = {"Model precision": "fp8", "Accelerator memory": "180 GB",
              "Accelerator interconnect": "NVLink 5", "Host memory": "2 TB"}  # fmt: skip
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        _a_published_submission(connection, {"systems": {"S1": {"fields": fields}}})
        connection.execute(sa.text(
            "INSERT INTO systems (submission_id, dir_name, node_count, serving_framework) "
            "VALUES (1, 'S1', 2, 'SGLang 0.5')"
        ))  # fmt: skip
        _a_published_curve(connection, _a_snapshot(), 2)
    upgrade(url)
    with engine.connect() as connection:
        (facts,) = connection.execute(sa.text("SELECT facts FROM published_curves")).scalars()
    assert (
        json.loads(facts)
        == curve_facts(fields, 2, "SGLang 0.5")
        == {
            "precision": "fp8",
            "accelerator_memory": "180 GB",
            "interconnect": "NVLink 5",
            "serving_software": "SGLang 0.5",
            "nodes": "2",
        }
    )
    engine.dispose()
