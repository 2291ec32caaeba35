"""Migrations create exactly the schema the models describe."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from app.db.migrate import upgrade
from app.db.models import Base
from app.db.session import Database

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
        connection.execute(sa.text(
            "INSERT INTO organizations (slug, name, created_at, committee_appointed) "
            "VALUES ('acme', 'Acme', '2026-11-01 00:00:00', 0)"
        ))  # fmt: skip
        connection.execute(sa.text(
            "INSERT INTO stored_files (sha256, size, kind, created_at) "
            f"VALUES ('{'ab' * 32}', 1, 'archive', '2026-11-01 00:00:00')"
        ))  # fmt: skip
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
