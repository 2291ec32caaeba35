"""The demo set, loaded once per test run and backend, then copied for each test.

Loading the demo runs the real upload, checks and re-count pipeline for every demo
submission (ten seconds or more); a copy is a folder copy and, on PostgreSQL, a
``CREATE DATABASE … TEMPLATE``. The demo loader's own test is what runs the pipeline.
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from app.db.session import Database
from app.settings import Settings
from tests.support.services import fresh_postgres_database, migrated_sqlite


@dataclass(frozen=True)
class DemoTemplate:
    data_dir: Path  # its blobs and bundles (and, on SQLite, its database)
    postgres_template: str | None  # the PostgreSQL database to copy, if any
    submissions: int  # what load_demo answered


@cache
def demo_template(backend: str) -> DemoTemplate:
    """The demo loaded once (per test process) into a folder and, for *backend*
    ``postgresql``, a database kept to be copied."""
    from app.demo.load import load_demo

    base = Path(tempfile.mkdtemp(prefix="portal-test-demo-"))
    atexit.register(shutil.rmtree, base, True)
    data_dir = base / "data"
    url: str | None = None
    if backend == "sqlite":
        migrated_sqlite(data_dir)
    else:
        manager = fresh_postgres_database(migrated=True)
        url = manager.__enter__()
        atexit.register(manager.__exit__, None, None, None)
        data_dir.mkdir(parents=True)
    settings = Settings(data_dir=data_dir, database_url=url, redis_url=None)
    database = Database(settings.effective_database_url)
    try:
        loaded = load_demo(database, settings)
    finally:
        database.dispose()  # a template database takes no connections
    if url is None:
        # Everything in the main file (no -wal beside it), so a plain copy is the database.
        with sqlite3.connect(data_dir / "portal.sqlite3") as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return DemoTemplate(data_dir, url.rsplit("/", 1)[1] if url else None, loaded)


@contextmanager
def demo_copy(backend: str, data_dir: Path) -> Iterator[tuple[Settings, Database]]:
    """A writable copy of the demo at *data_dir*: its settings and its database."""
    template = demo_template(backend)
    shutil.copytree(template.data_dir, data_dir)
    with _database_url(template) as url:
        settings = Settings(data_dir=data_dir, database_url=url, redis_url=None)
        database = Database(settings.effective_database_url)
        try:
            yield settings, database
        finally:
            database.dispose()


@contextmanager
def _database_url(template: DemoTemplate) -> Iterator[str | None]:
    if template.postgres_template is None:
        yield None
        return
    with fresh_postgres_database(template=template.postgres_template) as url:
        yield url
