"""Migrations create exactly the schema the models describe."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

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
