"""Shared fixtures: settings on a temporary data dir, a migrated database, bundles,
and the real portal (web + worker processes) for end-to-end tests."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cryptography.fernet import Fernet
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from xdist.remote import Producer

from app.db.session import Database
from app.demo.bundles import PUBLISHED_SEED_SET, BundleFactory, SeedSetSpec, SystemSpec
from app.settings import Settings, business_calendar, get_settings
from tests.support import PROJECT_ROOT
from tests.support.bundles import broken
from tests.support.demo import copy_demo_folder, demo_copy, load_in_background
from tests.support.fakes import RecordingQueue
from tests.support.loop_guard import install as refuse_queries_on_the_event_loop
from tests.support.objectstore import shared_object_store
from tests.support.portal import (
    RunningPortal,
    start_portal,
    stop_portal,
)
from tests.support.scheduling import DEPLOYED_PORTAL, OnePortalPerRun
from tests.support.services import (
    SHARED_DIR,
    drop_run_databases,
    fresh_postgres_database,
    migrated_sqlite,
    redis_database,
    redis_url,
    require,
    stop_embedded_postgres,
)

# Every property test is deterministic by default (the same examples on every run and
# machine: a failure in CI is one anyone can replay), has no time limit per example and
# no health check on speed (a busy machine is not a failure), and keeps no example
# database in the checkout; HYPOTHESIS_PROFILE=explore searches afresh on each run.
hypothesis_settings.register_profile(
    "explore", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.register_profile(
    "deterministic", hypothesis_settings.get_profile("explore"), derandomize=True, database=None
)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

# The tests speak plain HTTP to loopback and nothing else, so they trust no certificate
# authority: an empty folder of them, for the test processes and every process they
# start. Each HTTP client made (the tests', the portal's, the official CLI's, which makes
# one a request) otherwise reads certifi's whole bundle: 40 ms of CPU, over a thousand
# times a run. A test that reached for a TLS server would now fail to verify it.
os.environ.pop("SSL_CERT_FILE", None)
os.environ["SSL_CERT_DIR"] = str(Path(tempfile.gettempdir()) / "portal-tests-trust-no-authority")
os.makedirs(os.environ["SSL_CERT_DIR"], exist_ok=True)

_MADE_SHARED_DIR = pytest.StashKey[bool]()
_DEMO_LOADER = pytest.StashKey[subprocess.Popen[bytes]]()

# Each backend fixture runs on the embedded default; a test (or module) marked
# ``postgresql`` runs on the deployed stack too: what differs in SQL, in the queue or in
# the processes' sharing. The rest would only repeat itself there.
BACKENDS = {
    "database_url": ("sqlite", "postgresql"),
    "demo_env": ("sqlite", "postgresql"),
    "fresh_demo": ("sqlite", "postgresql"),
    "portal": ("embedded", DEPLOYED_PORTAL),
}


# The test processes take tests one at a time in the order collected
# (tests/support/scheduling.py): the longest first, so that no process is left with a
# minute-long test while the others have finished.
HEAVIEST_FIRST = ("exhaustive", "slow", "browser")

refuse_queries_on_the_event_loop()


def pytest_configure(config: pytest.Config) -> None:
    # The run's shared folder (the demo template the test processes share), made by the
    # process that starts the others, which inherit it.
    if not hasattr(config, "workerinput") and SHARED_DIR not in os.environ:
        os.environ[SHARED_DIR] = tempfile.mkdtemp(prefix="portal-test-run-")
        config.stash[_MADE_SHARED_DIR] = True
        if config.getoption("numprocesses", None) and not config.getoption("cov_source", None):
            # The SQLite demo loads while the test processes start and run other tests
            # (under coverage, a test process loads it, where the tracer sees the pipeline).
            config.stash[_DEMO_LOADER] = load_in_background("sqlite")


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(_MADE_SHARED_DIR, False):
        loader = config.stash.get(_DEMO_LOADER, None)
        if loader is not None:
            loader.wait()
        drop_run_databases()
        stop_embedded_postgres()
        shutil.rmtree(os.environ.pop(SHARED_DIR), ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def weight(item: pytest.Item) -> int:
        marks = [i for i, name in enumerate(HEAVIEST_FIRST) if item.get_closest_marker(name)]
        return min(marks, default=len(HEAVIEST_FIRST))

    items.sort(key=weight)  # stable: the order within each weight is kept


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> OnePortalPerRun:
    """The deployed portal's tests in one process (tests/support/scheduling.py)."""
    return OnePortalPerRun(config, log)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    deployed_too = metafunc.definition.get_closest_marker("postgresql") is not None
    for name, (embedded, deployed) in BACKENDS.items():
        if name in metafunc.fixturenames:
            params = [embedded, deployed] if deployed_too else [embedded]
            metafunc.parametrize(name, params, indirect=True)


@pytest.fixture(autouse=True)
def settings_read_afresh() -> Iterator[None]:
    """A process reads its settings from the environment once (``get_settings``); a test
    that runs the portal's commands in this process sets its own environment, which the
    next test must not inherit."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A database test runs on the embedded SQLite, and where marked ``postgresql`` on
    PostgreSQL too (there, a database already migrated, cloned from the run's template)."""
    if request.param == "sqlite":
        yield None
    else:
        with fresh_postgres_database(migrated=True) as url:
            yield url


@pytest.fixture
def settings(tmp_path: Path, database_url: str | None) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        redis_url=None,
        storage_cache_dir=tmp_path / "cache",  # the bundles each test's host extracts
    )


@pytest.fixture
def database(settings: Settings) -> Iterator[Database]:
    """A migrated database: migrations ran once per run, each test gets a copy."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if settings.database_url is None:
        migrated_sqlite(settings.data_dir)
    db = Database(settings.effective_database_url)
    yield db
    db.dispose()


@pytest.fixture(scope="session")
def demo_env(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Settings, Database]]:
    """The demo results, one copy for the whole run: only for read-only tests."""
    with demo_copy(request.param, tmp_path_factory.mktemp("demo") / "data") as env:
        yield env


@pytest.fixture
def fresh_demo(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Settings, Database]]:
    """A copy of the demo results of this test's own, to change."""
    with demo_copy(request.param, tmp_path / "data") as env:
        yield env


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


@dataclass(frozen=True)
class SeedRegistry:
    """A seed-set file as MLCommons publishes it, with a set published for the cohort a
    live portal (the real clock) takes now; the pinned checker's set A stays adoptable in
    its own window, so the fixed-date bundles keep passing."""

    path: Path
    current: SeedSetSpec
    target_cohort: str


@pytest.fixture(scope="session")
def seed_registry(tmp_path_factory: pytest.TempPathFactory) -> SeedRegistry:
    import yaml

    eligible = business_calendar(Settings()).first_eligible_cohort(dt.datetime.now(dt.UTC))
    current = SeedSetSpec(
        "B",
        {"scheduler_rng_seed": 811, "sample_index_rng_seed": 2027, "model_seed": 4099},
    )
    window_a = ["2026-10-C1", "2026-11-C0", "2026-11-C1", "2026-12-C0"]
    path = tmp_path_factory.mktemp("registry") / "seed_sets.yaml"
    sets = [
        {"id": PUBLISHED_SEED_SET.id, **PUBLISHED_SEED_SET.seeds, "cohorts": window_a},
        {"id": current.id, **current.seeds},
    ]
    path.write_text(yaml.safe_dump({"cohort": {"cohort-id": str(eligible), "seed_sets": sets}}))
    # The cohort after the first eligible one: a test crossing a cutoff midnight is
    # still in time for it, and it is inside set B's four-cohort window.
    return SeedRegistry(path, current, str(eligible.next()))


@pytest.fixture(scope="session")
def current_archive(bundle_cache: Path, seed_registry: SeedRegistry) -> Path:
    """A passing bundle that a live portal can still take into a cohort today."""
    return BundleFactory(
        target_cohort=seed_registry.target_cohort, seed_set=seed_registry.current
    ).archive(bundle_cache / "current.tar.gz")


@pytest.fixture(scope="session")
def rival_archive(bundle_cache: Path) -> Path:
    """A passing bundle of the other submitting organisation (the accounts' "rival")."""
    system = SystemSpec(name="Borealis MI355X x8", shortened_name="Borealis-MI355Xx8",
                        org="Borealis AI", accelerator="AMD MI355X")  # fmt: skip
    return BundleFactory(system=system, submission_id="sub-0002").archive(
        bundle_cache / "rival.tar.gz"
    )


@pytest.fixture(scope="session")
def bad_archive(bundle_cache: Path) -> Path:
    return BundleFactory(submission_id="sub-bad").archive(
        bundle_cache / "bad.tar.gz", edits=broken("inflated-system-tps", "wrong-seed")
    )


@pytest.fixture(scope="session")
def portal(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    seed_registry: SeedRegistry,
) -> Iterator[RunningPortal]:
    """The portal with web + one real worker process: as `make run` starts it on the
    embedded defaults, and on PostgreSQL and Redis as deployments run it. Its checker
    reads a seed-set file with a set published for today's cohort, as an operator
    configures it when MLCommons publishes one."""
    base = tmp_path_factory.mktemp("portal")
    registry = {"ENDPOINTS_PORTAL_SEED_SETS_FILE": str(seed_registry.path)}
    if request.param == "embedded":
        # The demo, as `make run` loads it on an empty database (the buyer's pages read
        # it): here a copy of the run's demo, loaded once (tests/support/demo.py).
        copy_demo_folder(base / "data")
        running = start_portal(base / "data", base / "portal.log", registry)
        yield running
        _stop_shared_portal(running)
        return
    server = redis_url()
    require(server is not None, "Redis (ENDPOINTS_PORTAL_TEST_REDIS_URL)")
    import redis

    redis_db = redis_database(server, "portal")
    redis.Redis.from_url(redis_db).flushdb()
    store = shared_object_store()
    # As deployments run it on separate hosts (docker-compose.yml): web and worker in
    # data directories of their own, sharing PostgreSQL, Redis, the S3 store and the key.
    hosts = {
        **store.env,
        "ENDPOINTS_PORTAL_STORAGE_URL": store.new_url(),
        "ENDPOINTS_PORTAL_SECRET_KEY": Fernet.generate_key().decode(),
    }
    # The demo as the web process would load it on the empty database: here a copy of
    # the run's PostgreSQL demo (tests/support/demo.py), its artifacts moved to the S3
    # store with the portal's own command, and nothing of them left in the host's folder.
    with demo_copy("postgresql", base / "web-data") as (demo, _):
        url = str(demo.effective_database_url)
        _move_artifacts(base / "web-data", url, hosts)
        running = start_portal(
            base / "web-data",
            base / "portal.log",
            {**registry, **hosts, "DATABASE_URL": url, "REDIS_URL": redis_db},
            worker_data_dir=base / "worker-data",
        )
        yield running
        _stop_shared_portal(running)


def _stop_shared_portal(running: RunningPortal) -> None:
    """The run's portal is stopped at the end. A web process that ended before, or that
    no longer answers, is an error that says which (an exit by a signal is a negative
    code), with its log's end."""
    problem = None
    if (ended := running.process.poll()) is not None:
        problem = f"ended during the run (exit code {ended})"
    else:
        try:
            httpx.get(f"{running.url}/healthz", timeout=30).raise_for_status()
        except httpx.HTTPError as exc:
            problem = f"is running but did not answer at the end ({type(exc).__name__}: {exc})"
    stop_portal(running, at_once=True)
    assert problem is None, (
        f"the portal's web process {problem}; its log ends: "
        f"{running.log.read_text(errors='replace')[-3000:]}"
    )


def _move_artifacts(data_dir: Path, database_url: str, hosts: dict[str, str]) -> None:
    """The local store's objects copied to the store *hosts* name, then removed here."""
    env = {**os.environ, **hosts, "ENDPOINTS_PORTAL_DATA_DIR": str(data_dir),
           "DATABASE_URL": database_url}  # fmt: skip
    to = env.pop("ENDPOINTS_PORTAL_STORAGE_URL")
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "storage", "migrate", "--to", to, "--create"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shutil.rmtree(data_dir / "blobs")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    require(Path(path).exists(), "Debian's chromium (apt-get install chromium)")
    return path


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[object]:
    """One Chromium per module of page tests; each test gets a fresh context from it
    (``page``). Not one per run: while a browser is open, Playwright's sync API keeps its
    event loop running in this thread, and every ``asyncio.run`` elsewhere (the harness's
    tests) would fail."""
    pytest.importorskip("playwright.sync_api")
    from tests.support.browser import chromium

    with chromium(chromium_path) as launched:
        yield launched


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A Chromium page whose console errors fail the test (tests/support/browser.py)."""
    from tests.support.browser import watched_page

    with watched_page(browser) as page:
        yield page
