"""The demo set, loaded once per test run and backend, then copied for each test.

Loading the demo runs the real upload, checks and re-count pipeline for every demo
submission (ten seconds or more); a copy is a folder copy and, on PostgreSQL, a
``CREATE DATABASE … TEMPLATE``. The demo loader's own test is what runs the pipeline.
"""

from __future__ import annotations

import fcntl
import gc
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO

from app.db.session import Database
from app.settings import Settings
from tests.support import PROJECT_ROOT
from tests.support.services import (
    fresh_postgres_database,
    migrated_sqlite,
    run_scoped_postgres_database,
    shared_run_dir,
)


@dataclass(frozen=True)
class DemoTemplate:
    data_dir: Path  # its blobs and bundles (and, on SQLite, its database)
    postgres_template: str | None  # the PostgreSQL database to copy, if any
    submissions: int  # what load_demo answered


@cache
def demo_template(backend: str) -> DemoTemplate:
    """The demo loaded once per test run and *backend* into a folder (its blobs and
    bundles; on SQLite its database too) and, on PostgreSQL, a database kept to be
    copied. The test processes of one run share it: the first to ask loads it, under a
    lock, while the others wait (or a process of its own loads it from the start:
    ``load_in_background``); the run's first process drops the database at the end
    (tests/conftest.py)."""
    with _lock_file(backend) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process loads; the others wait for it
        return _loaded_under_lock(backend)


def _lock_file(backend: str) -> IO[str]:
    return open(shared_run_dir() / f"demo-{backend}.lock", "w")


def _loaded_under_lock(backend: str) -> DemoTemplate:
    base = shared_run_dir() / f"demo-{backend}"
    done = base / "loaded.json"
    if not done.exists():
        shutil.rmtree(base, ignore_errors=True)  # a load cut short
        template = _load_template(base, backend)
        done.write_text(json.dumps([template.postgres_template, template.submissions]))
        return template
    postgres_template, submissions = json.loads(done.read_text())
    return DemoTemplate(base / "data", postgres_template, submissions)


def load_in_background(backend: str) -> subprocess.Popen[bytes]:
    """Start loading the demo for *backend* in a process of its own, holding the lock
    from now on (the child inherits it), so that the test processes run other tests
    while it loads and wait for it only when a test needs the demo. Should the load
    fail, the lock is released all the same and the first test process to ask loads it
    (and reports why)."""
    with _lock_file(backend) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.Popen(
            [sys.executable, "-m", "tests.support.demo", backend],
            cwd=PROJECT_ROOT,
            pass_fds=(lock.fileno(),),  # the lock is the open file's: held until it exits
            stdout=subprocess.DEVNULL,
        )


def _load_template(base: Path, backend: str) -> DemoTemplate:
    from app.demo.load import load_demo

    data_dir = base / "data"
    url: str | None = None
    if backend == "sqlite":
        migrated_sqlite(data_dir)
    else:
        url = run_scoped_postgres_database(migrated=True)
        data_dir.mkdir(parents=True)
    settings = Settings(data_dir=data_dir, database_url=url, redis_url=None)
    database = Database(settings.effective_database_url)
    try:
        loaded = load_demo(database, settings)
    finally:
        database.dispose()  # a template database takes no connections
    if url is None:
        # Everything in the main file, so the main file alone is the database (first the
        # connections the load left to the garbage collector are closed).
        gc.collect()
        conn = sqlite3.connect(data_dir / "portal.sqlite3")
        try:
            busy, _frames, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.close()
        assert busy == 0, "the demo's database is still in use: it cannot be checkpointed"
    return DemoTemplate(data_dir, url.rsplit("/", 1)[1] if url else None, loaded)


def copy_demo_folder(data_dir: Path) -> None:
    """The SQLite demo (database, blobs and bundles) copied to *data_dir*, for a portal
    to start on it as it would after loading the demo itself."""
    _copy_folder(demo_template("sqlite"), data_dir)


@contextmanager
def demo_copy(backend: str, data_dir: Path) -> Iterator[tuple[Settings, Database]]:
    """A writable copy of the demo at *data_dir*: its settings and its database."""
    template = demo_template(backend)
    _copy_folder(template, data_dir)
    with _database_url(template) as url:
        settings = Settings(data_dir=data_dir, database_url=url, redis_url=None)
        database = Database(settings.effective_database_url)
        try:
            yield settings, database
        finally:
            database.dispose()


def _copy_folder(template: DemoTemplate, data_dir: Path) -> None:
    """The template's folder, without SQLite's -wal and -shm files: the main file holds
    the whole database (checkpointed after the load), and a connection of the loading
    process that the garbage collector closes later deletes them, maybe mid-copy."""
    shutil.copytree(
        template.data_dir, data_dir, ignore=shutil.ignore_patterns("*.sqlite3-wal", "*.sqlite3-shm")
    )


@contextmanager
def _database_url(template: DemoTemplate) -> Iterator[str | None]:
    if template.postgres_template is None:
        yield None
        return
    with fresh_postgres_database(template=template.postgres_template) as url:
        yield url


if __name__ == "__main__":  # load_in_background's process: the lock is held already
    _loaded_under_lock(sys.argv[1])
