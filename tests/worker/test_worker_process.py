"""End to end: the portal as `make run` starts it, with a real worker process and the
embedded broker, driven over real HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.cli.supervisor import end_group
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.settings import Settings
from tests.support import PROJECT_ROOT
from tests.support.accounts import bearer, create_accounts
from tests.support.portal import RunningPortal, wait_until_serving
from tests.support.services import listening_socket

# PostgreSQL and Redis too: the worker there is how deployments run.
pytestmark = [pytest.mark.slow, pytest.mark.postgresql]


def _upload(portal: RunningPortal, archive: Path, **fields: str) -> dict[str, Any]:
    with portal.client("submitter") as client:
        response = client.post(
            "/api/v1/submissions", files={"file": (archive.name, archive.read_bytes())}, data=fields
        )
    assert response.status_code in (200, 201), response.text
    body: dict[str, Any] = response.json()
    return body


def test_verdict_within_seconds(portal: RunningPortal, good_archive: Path) -> None:
    started = time.monotonic()
    body = _upload(portal, good_archive)
    done = portal.wait_finished(str(body["id"]), timeout=30)
    elapsed = time.monotonic() - started
    assert done["state"] == "passed_checks" and done["verdict"] == "passed"
    assert done["result_status"] == "provisional"
    assert elapsed < 15, f"took {elapsed:.1f}s"
    assert done["job"]["state"] == "succeeded" and done["job"]["attempts"] == 1


def test_rejected_bundle_shows_its_failing_rules(portal: RunningPortal, bad_archive: Path) -> None:
    body = _upload(portal, bad_archive, not_for_review="1")
    done = portal.wait_finished(str(body["id"]))
    assert done["state"] == "rejected" and done["for_review"] is False
    with portal.client("chair") as client:
        findings = client.get(f"/api/v1/submissions/{body['id']}/findings").json()["findings"]
    failing = {f["rule"] for f in findings if not f["passed"]}
    assert failing == {"metric-consistency-system-tps", "seed-runtime-match"}


def test_same_content_repacked_is_rejected_as_duplicate(
    portal: RunningPortal, tmp_path: Path
) -> None:
    factory = BundleFactory(submission_id="sub-dup")
    first = _upload(portal, factory.archive(tmp_path / "a.tar.gz"))
    second = _upload(portal, factory.archive(tmp_path / "b.zip", fmt="zip"))
    assert second["id"] != first["id"]
    done = portal.wait_finished(str(second["id"]))
    assert done["state"] == "rejected"
    with portal.client("chair") as client:
        findings = client.get(f"/api/v1/submissions/{second['id']}/findings").json()["findings"]
    dup = next(f for f in findings if f["rule"] == "duplicate-upload")
    assert dup["severity"] == "error" and str(first["id"]) in dup["message"]


def _spawn(
    *args: str, data: Path, pass_fds: tuple[int, ...] = (), log: Path | None = None
) -> subprocess.Popen[bytes]:
    """``endpoints-portal *args*`` on *data*; its output to *log*, or nowhere."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["ENDPOINTS_PORTAL_DATA_DIR"] = str(data)
    env["ENDPOINTS_PORTAL_DEMO_DATA"] = "false"  # an empty portal: only this test's work
    with open(log or os.devnull, "wb") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", *args],
            cwd=PROJECT_ROOT,
            env=env,
            start_new_session=True,
            stdout=output,
            stderr=subprocess.STDOUT,
            pass_fds=pass_fds,
        )


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM to the process (a worker stops its own pool), then its group is cleared."""
    if proc is not None:
        end_group(proc, 30)


def _wait_for(what: str, fetch: Callable[[], Any], done: Callable[[Any], bool]) -> Any:
    deadline = time.monotonic() + 60
    value = fetch()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.3)
        value = fetch()
    assert done(value), (what, value)
    return value


def test_work_waits_for_a_worker_of_its_queue(tmp_path: Path) -> None:
    """Uploads are accepted with no worker running (the embedded broker keeps the job); a
    verdicts-only worker checks them and leaves the re-counts that follow to a worker that
    takes the rest, so a verdict never waits behind them."""
    archive, _events = _sweep_with_events(tmp_path, 2)
    data, log = tmp_path / "data", tmp_path / "web.log"
    with listening_socket() as listener:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        fd = listener.fileno()
        web = _spawn("serve", "--no-worker", "--fd", str(fd), data=data, pass_fds=(fd,), log=log)
    workers: list[subprocess.Popen[bytes]] = []
    try:
        wait_until_serving(url, web, log)
        database = Database(Settings(data_dir=data).effective_database_url)
        tokens = create_accounts(database)
        database.dispose()
        response = httpx.post(
            f"{url}/api/v1/submissions",
            files={"file": ("g.tar.gz", archive.read_bytes())},
            headers=bearer(tokens["submitter"]),
            timeout=30,
        )
        assert response.status_code == 201
        public_id = response.json()["id"]
        with httpx.Client(base_url=url, headers=bearer(tokens["chair"]), timeout=30) as chair:
            time.sleep(2)
            assert chair.get(f"/api/v1/submissions/{public_id}").json()["state"] == "received"

            workers.append(_spawn("worker", "--verdicts-only", "--concurrency", "1", data=data))
            _wait_for(
                "the check",
                lambda: chair.get(f"/api/v1/submissions/{public_id}").json(),
                lambda body: body["state"] == "passed_checks",
            )
            recounts = f"/api/v1/submissions/{public_id}/retokenizations"
            _wait_for(
                "the re-counts queued",
                lambda: chair.get(recounts).json()["data"],
                lambda d: len(d) == 2,
            )
            time.sleep(2)  # time enough for the verdicts' worker to take one, were it its kind
            queued = chair.get(recounts).json()["data"]
            assert [r["job"]["state"] for r in queued] == ["queued", "queued"], queued

            workers.append(_spawn("worker", "--concurrency", "1", data=data))
            _wait_for(
                "the re-counts done",
                lambda: chair.get(recounts).json()["data"],
                lambda d: [r["job"]["state"] for r in d] == ["succeeded", "succeeded"],
            )
    finally:
        for worker in workers:
            _stop(worker)
        _stop(web)


def test_reproduction_runs_in_the_worker_against_the_simulator(
    portal: RunningPortal, tmp_path: Path
) -> None:
    from harness.sim import SimConfig
    from tests.support.sim import RunningSim

    # A bundle (and a system) of its own: the portal is shared, and other tests move their
    # submissions on (in whatever order the test processes take them).
    system = SystemSpec(name="Acme H200 reproduced", shortened_name="Acme-H200-repro")
    archive = BundleFactory(system=system, submission_id="sub-repro").archive(
        tmp_path / "repro.tar.gz"
    )
    body = _upload(portal, archive)
    portal.wait_finished(str(body["id"]))
    with RunningSim(SimConfig(ttft_ms=2, tpot_ms=1, output_tokens=20, output_spread=0)) as sim:
        with portal.client("chair") as client:
            started = client.post(
                f"/api/v1/submissions/{body['id']}/reproductions",
                json={
                    "point": "Acme_H200_reproduced/llama3_1-8b/r16",
                    "endpoint_url": sim.url,
                    "time_cap_s": 2,
                    "api_key": "sk-test",
                },
            )
            assert started.status_code == 202, started.text
            rid = started.json()["id"]
            assert "sk-test" not in started.text
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                r = client.get(f"/api/v1/reproductions/{rid}").json()
                if r["finished"]:
                    break
                time.sleep(0.3)
    assert r["job"]["state"] == "succeeded", r
    assert r["reproduced"]["n_completed"] > 16 and r["verdict"] in ("info", "warning")
    assert r["status"] == "unverified"
    with portal.client("chair") as client:
        curve = client.get(f"/api/v1/submissions/{body['id']}").json()["curves"][0]
    assert any(x["id"] == rid for x in curve["reproductions"])
    # Secrets never reach the logs of the web and worker processes.
    log = portal.log.read_text(errors="replace")
    assert "sk-test" not in log
    assert not any(token in log for token in portal.tokens.values())


def _sweep_with_events(tmp_path: Path, points: int) -> tuple[Path, list[tuple[str, Path]]]:
    """A sweep's bundle carrying the events of its first *points* points."""
    import shutil
    import tarfile

    from tests.support.sweeps import make_sweep

    archive, events, _tokenizer = make_sweep(tmp_path / "sweep")
    unpacked = tmp_path / "bundle"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    [org] = list(unpacked.iterdir())
    [submission] = list(org.iterdir())
    for label, path in events[:points]:
        shutil.copy(path, submission / "results" / label / "events.jsonl")
    with_events = tmp_path / "with-events.tar.gz"
    with tarfile.open(with_events, "w:gz") as tar:
        tar.add(org, arcname=org.name)
    return with_events, events[:points]


def _finished_recounts(portal: RunningPortal, public_id: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    recounts: list[dict[str, Any]] = []
    with portal.client("chair") as client:
        while time.monotonic() < deadline:
            recounts = client.get(f"/api/v1/submissions/{public_id}/retokenizations").json()["data"]
            if len(recounts) == count and all(r["finished"] for r in recounts):
                break
            time.sleep(0.3)
    assert len(recounts) == count, recounts
    return recounts


def test_bundle_events_are_recounted_by_the_worker_after_checks(
    portal: RunningPortal, tmp_path: Path
) -> None:
    with_events, _events = _sweep_with_events(tmp_path, 3)
    body = _upload(portal, with_events)
    assert portal.wait_finished(str(body["id"]))["state"] == "passed_checks"
    recounts = _finished_recounts(portal, str(body["id"]), 3)
    for recount in recounts:
        assert recount["job"]["state"] == "succeeded" and recount["events"]["source"] == "bundle"
        assert recount["findings"] and recount["tokenizer"]


def test_large_points_are_counted_in_parts_by_the_worker_processes(tmp_path: Path) -> None:
    """Points above the split size are counted in parts by the worker's processes and
    merged: the output tokens the reference tokenizer counts in one pass here."""
    from harness.metrics.summary import SummaryOptions, summarize
    from harness.metrics.tokens import load_counter, load_registry
    from tests.support.portal import start_portal, stop_portal

    with_events, events = _sweep_with_events(tmp_path, 2)
    split = start_portal(
        tmp_path / "data",
        tmp_path / "portal.log",
        {
            "ENDPOINTS_PORTAL_RETOKENIZE_SPLIT_BYTES": "1",
            "ENDPOINTS_PORTAL_RETOKENIZE_MAX_PARTS": "3",
            "ENDPOINTS_PORTAL_RETOKENIZE_BLOCK_LINES": "20",
            "ENDPOINTS_PORTAL_WORKER_CONCURRENCY": "2",
        },
    )
    try:
        body = _upload(split, with_events)
        assert split.wait_finished(str(body["id"]))["state"] == "passed_checks"
        recounts = _finished_recounts(split, str(body["id"]), 2)
    finally:
        stop_portal(split)
    registry = load_registry(Path(split.env["ENDPOINTS_PORTAL_TOKENIZER_REGISTRY"]))
    counter = load_counter("llama3_1-8b", registry)
    by_point = {r["point"]: r for r in recounts}
    for label, path in events:
        recount = by_point[label]
        assert recount["job"]["state"] == "succeeded", recount["job"]
        assert [p["part"] for p in recount["parts"]] == [1, 2, 3]
        assert all(p["job"]["state"] == "succeeded" for p in recount["parts"])
        one_pass = summarize(
            path,
            counter,
            SummaryOptions(failures_as_completions=True, count_input_tokens=False),
        ).result
        assert (
            recount["recount"]["total_output_tokens"]
            == (one_pass["output_sequence_lengths"]["total"])
        )
        assert recount["recount"]["n_samples_completed"] == one_pass["n_samples_completed"]
    # The parts' counts went through the store (its local directory here), merged, removed.
    assert not any((tmp_path / "data" / "blobs").glob("*/*.npz"))
