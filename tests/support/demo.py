"""The demo set, loaded once per test run and backend, then copied for each test.

Loading the demo runs the real upload, checks and re-count pipeline for every demo
submission (ten seconds or more); a copy is a folder copy and, on PostgreSQL, a
``CREATE DATABASE … TEMPLATE``. The demo loader's own test is what runs the pipeline.
"""

from __future__ import annotations

import atexit
import fcntl
import os
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
    """The demo loaded once into a folder and, for *backend* ``postgresql``, a database
    kept to be copied. On SQLite the folder is the whole demo: the test processes of one
    run share it (the first to ask loads it, under a lock, while the others wait)."""
    if backend == "sqlite":
        return _shared_sqlite_template()
    return _load_template(Path(tempfile.mkdtemp(prefix="portal-test-demo-")), backend)


def _load_template(base: Path, backend: str) -> DemoTemplate:
    from app.demo.load import load_demo

    data_dir = base / "data"
    url: str | None = None
    if backend == "sqlite":
        migrated_sqlite(data_dir)
    else:
        atexit.register(shutil.rmtree, base, True)
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


SHARED_DIR = "ENDPOINTS_PORTAL_TEST_SHARED_DIR"


def shared_run_dir() -> Path:
    """A folder the test processes of this run share (tests/conftest.py makes it before
    the processes start and removes it at the end)."""
    return Path(os.environ[SHARED_DIR])


def _shared_sqlite_template() -> DemoTemplate:
    base = shared_run_dir() / "demo-sqlite"
    with open(shared_run_dir() / "demo-sqlite.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process loads; the others wait for it
        done = base / "loaded"
        if not done.exists():
            shutil.rmtree(base, ignore_errors=True)  # a load cut short
            template = _load_template(base, "sqlite")
            done.write_text(str(template.submissions))
            return template
    return DemoTemplate(base / "data", None, int(done.read_text()))


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
