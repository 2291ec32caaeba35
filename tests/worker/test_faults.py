"""Faults against the real processes: workers killed in the middle of a check, a re-count
and a reproduction; the web process killed during an upload; the broker down.

The job is redone (or failed with its reason), never left running and never run twice;
every accepted upload stays in the database; no half-written file is taken as complete.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import pytest
from sqlalchemy import func, select

from app.db.models import CheckRun, Job, Point, Retokenization, StoredFile, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, CurveSpec, SystemSpec
from app.settings import Settings
from tests.support.http import parent_of
from tests.support.portal import RunningPortal, kill_leftovers, start_portal, stop_portal
from tests.support.rows import must
from tests.support.scheduling import DEPLOYED_PORTAL
from tests.support.services import (
    free_port,
    fresh_postgres_database,
    redis_database,
    redis_server_binary,
    redis_url,
    require,
    start_redis_server,
)

pytestmark = pytest.mark.slow
# A lost job is noticed within seconds, not the production five minutes.
FAST_RECOVERY = {
    "ENDPOINTS_PORTAL_JOB_STALE_AFTER_S": "4",
    "ENDPOINTS_PORTAL_JOB_RECOVERY_INTERVAL_S": "1",
    "ENDPOINTS_PORTAL_DEMO_DATA": "false",
}


@pytest.fixture(scope="module", params=["embedded", DEPLOYED_PORTAL])
def faulty(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningPortal]:
    """A portal of this module's own: its workers get killed."""
    base = tmp_path_factory.mktemp("faults")
    if request.param == "embedded":
        portal = start_portal(base / "data", base / "portal.log", FAST_RECOVERY)
        yield portal
        stop_portal(portal, at_once=True)
        return
    require(redis_url() is not None, "Redis (ENDPOINTS_PORTAL_TEST_REDIS_URL)")
    with fresh_postgres_database() as url:
        queue = redis_database(redis_url(), "faults")
        env = {**FAST_RECOVERY, "DATABASE_URL": url, "REDIS_URL": queue}
        import redis

        redis.Redis.from_url(env["REDIS_URL"]).flushdb()
        portal = start_portal(base / "data", base / "portal.log", env)
        yield portal
        stop_portal(portal, at_once=True)


def _database(portal: RunningPortal) -> Database:
    settings = Settings(
        data_dir=portal.data_dir, database_url=portal.env.get("DATABASE_URL"), redis_url=None
    )
    return Database(settings.effective_database_url)


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        parent = parent_of(int(entry.name))
        if parent is not None:
            tree.setdefault(parent, []).append(int(entry.name))
    return tree


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def worker_processes(portal: RunningPortal) -> tuple[int, list[int]]:
    """The worker's main process under the portal, and its pool processes."""
    tree = _children()
    main = next(
        pid for pid in tree.get(portal.process.pid, []) if "app.cli worker" in _cmdline(pid)
    )
    return main, tree.get(main, [])


def kill_worker(portal: RunningPortal) -> None:
    """The worker's main process and its pool, at once (a machine or container lost)."""
    main, pool = worker_processes(portal)
    for pid in [*pool, main]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def pool_process_connected_to(portal: RunningPortal, port: int) -> int | None:
    """The pool process with a connection open to loopback *port* (the one running a
    reproduction against the simulator there), found by its sockets, not by its CPU use:
    other jobs (the bundle's re-counts) may be busier. (Killing an idle one is another
    fault: it may die holding the pool's queue lock and hang its siblings, which only a
    restart of the whole worker cures.)"""
    _, pool = worker_processes(portal)
    for pid in pool:
        try:
            inodes = {
                link.removeprefix("socket:[").rstrip("]")
                for fd in (Path("/proc") / str(pid) / "fd").iterdir()
                if (link := os.readlink(fd)).startswith("socket:[")
            }
            table = (Path("/proc") / str(pid) / "net" / "tcp").read_text().splitlines()[1:]
        except OSError:
            continue  # gone meanwhile
        for row in table:
            fields = row.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[9] in inodes:
                return pid
    return None


T = TypeVar("T")


def wait_for(condition: Callable[[], T | None], timeout: float, step: float = 0.02) -> T:
    """The first true value *condition* gives within *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"not within {timeout}s")


def _upload(portal: RunningPortal, archive: Path, token: str = "submitter") -> str:
    with portal.client(token) as client:
        response = client.post(
            "/api/v1/submissions", files={"file": (archive.name, archive.read_bytes())}
        )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _state(portal: RunningPortal, public_id: str) -> str:
    with portal.client("chair") as client:
        return str(client.get(f"/api/v1/submissions/{public_id}").json()["state"])


def test_worker_killed_mid_check_redoes_it_once(faulty: RunningPortal, tmp_path: Path) -> None:
    system = SystemSpec(name="Acme killed check", saturation_tps=44_000)
    # Three curves: a check long enough that the kill lands while it runs, even on a
    # loaded machine (with one, it could finish between the poll and the kill).
    curves = (CurveSpec(), CurveSpec(model="gpt-oss-120b", speed=0.4),
              CurveSpec(model="kimi-k3", offline="none", speed=0.5))  # fmt: skip
    archive = BundleFactory(system=system, curves=curves, submission_id="sub-kill").archive(
        tmp_path / "k.tar.gz"
    )
    public_id = _upload(faulty, archive)
    wait_for(lambda: _state(faulty, public_id) == "checking", 60)
    kill_worker(faulty)
    wait_for(lambda: _state(faulty, public_id) == "passed_checks", 90, step=0.3)
    database = _database(faulty)
    try:
        with database.session() as session:
            submission = session.scalars(
                select(Submission).where(Submission.public_id == public_id)
            ).one()
            job = session.scalars(select(Job).where(Job.submission_id == submission.id)).one()
            assert job.state == "succeeded" and job.attempts == 2, (job.state, job.attempts)
            runs = session.scalar(
                select(func.count(CheckRun.id)).where(CheckRun.submission_id == submission.id)
            )
            assert runs == 1  # redone, not duplicated
            points = session.scalar(select(func.count(Point.id)))
            assert points == 8 + 8 + 7  # each curve's points once, not twice
    finally:
        database.dispose()


def _big_events(source: Path, target: Path, copies: int) -> None:
    """The events of a real run, repeated with fresh sample ids: a long re-count."""
    lines = source.read_text().splitlines()
    head = [line for line in lines if '"session.' in line and "ended" not in line]
    samples = [line for line in lines if '"sample.' in line]
    tail = [line for line in lines if '"session.' in line and "ended" in line]
    with target.open("w") as out:
        out.write("\n".join(head) + "\n")
        for k in range(copies):
            suffix = f"{k:05d}"
            for line in samples:
                out.write(line.replace('"sample_uuid":"', f'"sample_uuid":"{suffix}', 1) + "\n")
        out.write("\n".join(tail) + "\n")


def test_worker_killed_mid_recount_redoes_it_once(faulty: RunningPortal, tmp_path: Path) -> None:
    from tests.support.sweeps import make_sweep

    with ThreadPoolExecutor(1) as pool:  # the harness runs its own event loop
        archive, events, tokenizer_dir = pool.submit(make_sweep, tmp_path / "sweep").result()
    registry = faulty.data_dir.parent / "tokenizers.json"
    registry.write_text(f'{{"llama3_1-8b": {{"location": "{tokenizer_dir}"}}}}')
    public_id = _upload(faulty, archive, token="chair")
    wait_for(lambda: _state(faulty, public_id) == "passed_checks", 60, step=0.2)
    label, source = events[-1]
    big = tmp_path / "big.jsonl"
    # Long enough that the kill lands mid-count on a busy machine (250 copies were counted
    # before it once the summary tokenized beside its reading).
    _big_events(source, big, copies=1000)
    with faulty.client("chair") as client:
        put = client.put(
            f"/api/v1/submissions/{public_id}/points/{label}/events",
            content=big.read_bytes(),
            timeout=120,
        )
        assert put.status_code == 201, put.text
        [rid] = put.json()["retokenizations"]

        def running() -> bool:
            body = client.get(f"/api/v1/retokenizations/{rid}").json()
            return bool(body["job"] and body["job"]["state"] == "running")

        wait_for(running, 60)
        kill_worker(faulty)
        done = wait_for(
            lambda: (b := client.get(f"/api/v1/retokenizations/{rid}").json())["finished"] and b,
            120,
            step=0.3,
        )
    assert done["job"]["state"] == "succeeded", done["job"]
    database = _database(faulty)
    try:
        with database.session() as session:
            retok = session.scalars(
                select(Retokenization).where(Retokenization.public_id == rid)
            ).one()
            assert must(retok.job).attempts == 2 and retok.recount is not None
    finally:
        database.dispose()


def test_pool_process_killed_mid_reproduction_is_redone(
    faulty: RunningPortal, good_archive: Path
) -> None:
    from harness.sim import SimConfig
    from tests.support.sim import RunningSim

    public_id = _upload(faulty, good_archive)
    wait_for(lambda: _state(faulty, public_id) == "passed_checks", 60, step=0.2)
    with RunningSim(SimConfig(ttft_ms=2, tpot_ms=1, output_tokens=20, output_spread=0)) as sim:
        with faulty.client("chair") as client:
            started = client.post(
                f"/api/v1/submissions/{public_id}/reproductions",
                json={
                    "point": "Acme_H200_x8/llama3_1-8b/r16",
                    "endpoint_url": sim.url,
                    "time_cap_s": 6,
                },
            )
            assert started.status_code == 202, started.text
            rid = started.json()["id"]

            def state() -> str:
                job = client.get(f"/api/v1/reproductions/{rid}").json()["job"]
                return str(job["state"]) if job else ""

            wait_for(lambda: state() == "running", 60)
            # In the middle of the measurement: the pool process loading the simulator.
            busy = wait_for(lambda: pool_process_connected_to(faulty, sim.port), 30)
            os.kill(busy, signal.SIGKILL)  # the OOM killer, a segfault
            body = wait_for(
                lambda: (b := client.get(f"/api/v1/reproductions/{rid}").json())["finished"] and b,
                120,
                step=0.3,
            )
    job = body["job"]
    assert job["state"] in ("succeeded", "failed"), job
    if job["state"] == "failed":
        assert job["error"]  # never silently stuck
    else:
        assert body["reproduced"]["n_completed"] > 0
        assert job["attempts"] >= 2


def test_web_killed_during_an_upload_leaves_nothing_half_written(
    tmp_path: Path, good_archive: Path
) -> None:
    """A web process killed mid-upload: after a restart no submission, no blob, and the
    same archive uploads as new (nothing of the broken one was taken as complete)."""
    data = tmp_path / "data"
    portal = start_portal(data, tmp_path / "web.log", {"ENDPOINTS_PORTAL_DEMO_DATA": "false"})
    token = portal.tokens["submitter"]
    boundary = "faultboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="g.tar.gz"\r\n'
        "Content-Type: application/gzip\r\n\r\n"
    ).encode()
    payload = good_archive.read_bytes()
    with socket.create_connection(("127.0.0.1", int(portal.url.rsplit(":", 1)[1]))) as sock:
        sock.sendall(
            (
                f"POST /api/v1/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {token}\r\n"
                f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                f"Content-Length: {len(head) + len(payload) * 40}\r\n\r\n"
            ).encode()
            + head
            + payload[: len(payload) // 2]
        )
        time.sleep(1.0)  # the web process is now streaming the file to disk
        os.killpg(portal.process.pid, signal.SIGKILL)
        portal.process.wait()
        kill_leftovers(data)  # the worker (own process group) is stopped by its parent's death
    partial = list((data / "tmp").glob("*"))
    restarted = start_portal(data, tmp_path / "web2.log", {"ENDPOINTS_PORTAL_DEMO_DATA": "false"})
    try:
        database = _database(restarted)
        try:
            with database.session() as session:
                assert session.scalar(select(func.count(Submission.id))) == 0
                assert session.scalar(select(func.count(StoredFile.id))) == 0
        finally:
            database.dispose()
        blobs = data / "blobs"
        assert not blobs.exists() or not any(p.is_file() for p in blobs.rglob("*"))
        # Half-written temporary files are swept at start-up.
        assert partial == [] or not any(p.exists() for p in partial)
        with restarted.client("submitter") as client:
            again = client.post(
                "/api/v1/submissions", files={"file": ("g.tar.gz", good_archive.read_bytes())}
            )
        assert again.status_code == 201 and again.json()["duplicate"] is False
    finally:
        stop_portal(restarted)


def _redis_server(port: int, tmp: Path) -> subprocess.Popen[bytes]:
    binary = redis_server_binary()
    require(binary is not None, "redis-server")
    assert binary is not None
    return start_redis_server(binary, port, tmp)


def _reachable(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def test_uploads_are_accepted_while_the_broker_is_down_and_checked_when_it_is_back(
    tmp_path: Path, good_archive: Path
) -> None:
    require(redis_url() is not None, "Redis (ENDPOINTS_PORTAL_TEST_REDIS_URL)")
    port = free_port()
    broker = _redis_server(port, tmp_path)
    with fresh_postgres_database() as url:
        env = {**FAST_RECOVERY, "DATABASE_URL": url, "REDIS_URL": f"redis://127.0.0.1:{port}/0"}
        portal = start_portal(tmp_path / "data", tmp_path / "portal.log", env)
        try:
            broker.terminate()
            broker.wait()
            assert not _reachable(port)
            public_id = _upload(portal, good_archive)  # accepted, its job stays queued
            time.sleep(2)
            assert _state(portal, public_id) == "received"
            broker = _redis_server(port, tmp_path)
            wait_for(lambda: _state(portal, public_id) == "passed_checks", 120, step=0.5)
        finally:
            stop_portal(portal)
            broker.terminate()
            broker.wait()
