"""Shared fixtures: settings on a temporary data dir, a migrated database, bundles,
and the real portal (web + worker processes) for end-to-end tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from app.db.migrate import upgrade
from app.db.session import Database
from app.demo.bundles import BundleFactory
from app.settings import Settings
from tests.support.bundles import broken
from tests.support.fakes import RecordingQueue
from tests.support.portal import (
    RunningPortal,
    start_portal,
    stop_portal,
)
from tests.support.services import (
    fresh_postgres_database,
    redis_url,
    require,
)

# Where the test services listen (.ci/services.sh starts them and prints these).


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


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def demo_env(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Settings, Database]]:
    """The demo results, loaded once per backend for the whole run: only for read-only tests."""
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


@pytest.fixture
def page(chromium_path: str) -> Iterator[object]:
    """A Chromium page whose console errors fail the test (tests/support/browser.py)."""
    pytest.importorskip("playwright.sync_api")
    from tests.support.browser import watched_page

    with watched_page(chromium_path) as page:
        yield page
