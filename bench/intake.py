"""The web process stays responsive while hostile archives are received and checked.

Starts the portal as ``make run`` does (embedded defaults: SQLite, the embedded broker,
web and one worker process), then sends it each archive of the hostile corpus of issue 44
(``tests/support/hostile.py``) and a passing bundle, one at a time. While an archive is
being received, read and (when it is taken) checked, another thread asks ``/healthz``
every 20 ms; the bench prints, per archive, the answer, how long until the verdict, and
the worst and median ``/healthz`` latency beside the target (under 100 ms).

    .venv/bin/python bench/intake.py            # exits 1 if a target is missed
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.accounts.services.accounts import create_user, issue_token  # noqa: E402
from app.core.authorization import Role  # noqa: E402
from app.db.migrate import upgrade  # noqa: E402
from app.db.session import Database  # noqa: E402
from app.demo.bundles import BundleFactory  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests.support import hostile  # noqa: E402
from tests.support.services import free_port  # noqa: E402

TARGET_MS = 100.0
PROBE_EVERY_S = 0.02


def corpus(tmp: Path) -> dict[str, Callable[[], bytes]]:
    good = BundleFactory(submission_id="bench-good").archive(tmp / "good.tar.gz")
    return {
        "passing bundle": good.read_bytes,
        "PAX header, 60,000-digit run": hostile.pax_digit_run,
        "PAX record, 60,000-digit value": hostile.pax_digits_in_a_value,
        "chained extension headers": hostile.chained_extensions,
        "GNU sparse member": hostile.gnu_sparse,
        "300 KiB GNU long name": hostile.gnu_long_name,
        "large block (600 MiB expanded)": lambda: hostile.large_block(600 * 1024**2),
        "zip of 300,001 entries": hostile.zip_of_many,
        "overlapping zip entries": hostile.zip_overlap,
        "zip name part of 300 bytes": hostile.zip_long_component,
    }


class Prober(threading.Thread):
    """Asks /healthz until stopped; keeps each answer's latency (a failure is infinite)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.latencies_ms: list[float] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        with httpx.Client(timeout=30) as client:
            while not self.stopped.is_set():
                started = time.perf_counter()
                try:
                    ok = client.get(f"{self.url}/healthz").status_code == 200
                except httpx.HTTPError:
                    ok = False
                elapsed = (time.perf_counter() - started) * 1000
                self.latencies_ms.append(elapsed if ok else float("inf"))
                self.stopped.wait(PROBE_EVERY_S)


def send(url: str, token: str, name: str, data: bytes) -> tuple[str, float]:
    """Upload *data* and wait for its verdict: what became of it, and the seconds taken."""
    headers = {"Authorization": f"Bearer {token}"}
    started = time.perf_counter()
    with httpx.Client(base_url=url, timeout=300, headers=headers) as client:
        answer = client.post("/api/v1/submissions", files={"file": (name, data)})
        if answer.status_code != 201:
            code = answer.json().get("error", {}).get("code", "?")
            return f"{answer.status_code} {code}", time.perf_counter() - started
        public_id = answer.json()["id"]
        while True:
            body = client.get(f"/api/v1/submissions/{public_id}").json()
            if body["finished"]:
                return f"201, then {body['state']}", time.perf_counter() - started
            time.sleep(0.05)


def start_portal(tmp: Path) -> tuple[subprocess.Popen[bytes], str, str, Path]:
    data = tmp / "data"
    data.mkdir()
    settings = Settings(data_dir=data)
    upgrade(settings.effective_database_url)
    database = Database(settings.effective_database_url)
    with database.session() as session:
        user = create_user(session=session, email="bench@acme.example", password="bench password",
                           role=Role.SUBMITTER, organization="Acme Corp")  # fmt: skip
        token = issue_token(session=session, user=user, name="bench")[1]
        session.commit()
    database.dispose()
    port = free_port()
    env = {**os.environ, "ENDPOINTS_PORTAL_DATA_DIR": str(data),
           "ENDPOINTS_PORTAL_DEMO_DATA": "0", "ENDPOINTS_PORTAL_UPLOADS_PER_HOUR": "0"}  # fmt: skip
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    log = tmp / "portal.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return process, url, token, log
        except httpx.HTTPError:
            time.sleep(0.3)
    process.terminate()
    raise SystemExit(f"the portal did not start:\n{log.read_text()[-3000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args()
    missed = 0
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        print("building the corpus…", flush=True)
        archives = {name: make() for name, make in corpus(tmp).items()}
        process, url, token, _log = start_portal(tmp)
        try:
            print(f"portal on {url}\n")
            print(f"{'archive':<33} {'bytes':>10}  {'answer':<34} {'verdict':>8}  "
                  f"{'/healthz worst':>14} {'median':>8}  target")  # fmt: skip
            for name, data in archives.items():
                prober = Prober(url)
                prober.start()
                outcome, seconds = send(url, token, name.split(",")[0] + ".bin", data)
                prober.stopped.set()
                prober.join()
                worst = max(prober.latencies_ms)
                median = statistics.median(prober.latencies_ms)
                ok = worst < TARGET_MS
                missed += not ok
                print(f"{name:<33} {len(data):>10,}  {outcome:<34} {seconds:>7.2f}s  "
                      f"{worst:>11.1f} ms {median:>5.1f} ms  < {TARGET_MS:.0f} ms "
                      f"{'met' if ok else 'MISSED'}")  # fmt: skip
        finally:
            process.terminate()
            process.wait(timeout=60)
    print(f"\n{len(archives) - missed} of {len(archives)} archives met the target")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
