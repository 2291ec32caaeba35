"""The verdict's wait, and load on the whole portal: uploads, their checks, results reads.

Starts the portal on each deployment (``--deployment``): the embedded defaults (SQLite,
the embedded broker, one web process and one worker, as `make run`), and as deployments
run it, on PostgreSQL and Redis on this machine (several uvicorn processes and Celery
workers). Each has a migrated database of its own (dropped after), the demo's results and
the scheduler, all on 127.0.0.1 (on PostgreSQL and Redis, ``--workers`` single-process
workers and ``--verdict-workers`` that take only a verdict's jobs, of which
docker-compose.yml runs one). First ``--verdicts`` uploads one after the other, each
timed from its upload to the verdict as the portal records it (what a submitter waits
for; targets: p50 ≤ 0.5 s, p95 ≤ 1 s); then for ``--seconds`` ``--uploaders`` clients
upload distinct passing bundles (each waits for its verdict) while ``--readers`` clients
read ``/api/v1/results`` with SLA filters. Prints throughput, error counts and
p50/p95/p99 latencies. Exits 1 if any request failed or the verdict's target is missed.

    eval "$(bash .ci/services.sh)"      # PostgreSQL on 55432, Redis on 56379
    .venv/bin/python bench/load.py --seconds 60

``--postgres`` and ``--redis`` name other servers (loopback only).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import select

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.accounts.services.accounts import create_user, issue_token  # noqa: E402
from app.core.authorization import Role  # noqa: E402
from app.db.migrate import upgrade  # noqa: E402
from app.db.models import Job, Submission  # noqa: E402
from app.db.session import Database  # noqa: E402
from app.demo.bundles import BundleFactory, SystemSpec  # noqa: E402
from app.demo.load import load_demo  # noqa: E402
from app.jobs.queue import CHECK_SUBMISSION  # noqa: E402
from app.settings import Settings  # noqa: E402


@dataclass
class Series:
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    sent_at: dict[str, float] = field(default_factory=dict)  # upload id: when it was sent

    def add(self, started: float) -> None:
        self.latencies_ms.append((time.perf_counter() - started) * 1000)

    def within(self, p50_ms: float, p95_ms: float) -> bool:
        values = sorted(self.latencies_ms)
        if len(values) < 2:
            return False
        cut = statistics.quantiles(values, n=100)
        return cut[49] <= p50_ms and cut[94] <= p95_ms

    def line(self, name: str, seconds: float) -> str:
        values = sorted(self.latencies_ms)
        if not values:
            return f"{name:<22} n=0 errors={len(self.errors)}"
        cut = _quantiles(values)
        return (
            f"{name:<22} n={len(values):<6} {len(values) / seconds:8.2f}/s  "
            f"p50 {cut[49]:8.1f} ms  p95 {cut[94]:8.1f} ms  p99 {cut[98]:8.1f} ms  "
            f"errors={len(self.errors)}"
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_bundles(count: int, target: Path) -> list[Path]:
    """Distinct passing bundles (no two have the same content)."""
    target.mkdir(parents=True, exist_ok=True)
    archives = []
    for i in range(count):
        system = SystemSpec(name=f"Acme load {i}", saturation_tps=30_000 + 97 * i)
        factory = BundleFactory(system=system, submission_id=f"load-{i:04d}")
        archives.append(factory.archive(target / f"load-{i}.tar.gz"))
    return archives


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("ab")
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT)


async def uploader(
    client: httpx.AsyncClient,
    archives: list[Path],
    token: str,
    until: float,
    uploads: Series,
    verdicts: Series,
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    while time.perf_counter() < until and archives:
        archive = archives.pop()
        started, sent_at = time.perf_counter(), time.time()
        try:
            response = await client.post(
                "/api/v1/submissions",
                files={"file": (archive.name, archive.read_bytes())},
                headers=headers,
            )
        except httpx.HTTPError as exc:
            uploads.errors.append(f"upload: {exc!r}")
            continue
        if response.status_code != 201:
            uploads.errors.append(f"upload {response.status_code}: {response.text[:200]}")
            continue
        uploads.add(started)
        public_id = response.json()["id"]
        verdicts.sent_at[public_id] = sent_at
        while True:
            await asyncio.sleep(0.2)
            body = (await client.get(f"/api/v1/submissions/{public_id}", headers=headers)).json()
            if body.get("finished"):
                if body["state"] != "passed_checks":
                    verdicts.errors.append(f"{public_id}: {body['state']} {body.get('error')}")
                else:  # when the portal says the checks finished: no polling in the figure
                    done = dt.datetime.fromisoformat(body["checks_finished_at"]).timestamp()
                    verdicts.latencies_ms.append((done - sent_at) * 1000)
                break
            if time.perf_counter() > until + 120:
                verdicts.errors.append(f"{public_id}: no verdict 120 s after the run")
                break


async def reader(client: httpx.AsyncClient, until: float, reads: Series, seed: int) -> None:
    rng = random.Random(seed)
    while time.perf_counter() < until:
        params = {
            "benchmark": rng.choice(["llama3_1-8b", "gpt-oss-120b", "kimi-k3"]),
            "ttft_p90_max_ms": rng.choice(["", "200", "500", "2000"]),
            "tps_per_user_min": rng.choice(["", "20", "50", "100"]),
        }
        started = time.perf_counter()
        try:
            response = await client.get(
                "/api/v1/results", params={k: v for k, v in params.items() if v}
            )
        except httpx.HTTPError as exc:
            reads.errors.append(repr(exc))
            continue
        if response.status_code != 200:
            reads.errors.append(f"{response.status_code}: {response.text[:200]}")
        else:
            reads.add(started)


# The verdict's wait in the phases the portal records: the upload's reading and
# registration (sent → uploaded_at), its commit and queueing (→ the job's enqueued_at),
# the worker's pick-up (→ started_at), the check itself (→ checks_finished_at).
PHASES = ("read and registered", "queued", "picked up", "checked")


def print_phases(database_url: str, sent_at: dict[str, float]) -> None:
    database = Database(database_url)
    spans: dict[str, list[float]] = {phase: [] for phase in PHASES}
    with database.session() as session:
        rows = session.execute(
            select(Submission.public_id, Submission.uploaded_at, Job.enqueued_at,
                   Job.started_at, Submission.checks_finished_at)
            .join(Job, Job.submission_id == Submission.id)
            .where(Submission.public_id.in_(list(sent_at)), Job.kind == CHECK_SUBMISSION)
        ).all()  # fmt: skip
    database.dispose()
    for public_id, *moments in rows:
        if None in moments:
            continue
        times = [sent_at[public_id], *(moment.timestamp() for moment in moments)]
        for phase, begin, end in zip(PHASES, times, times[1:], strict=False):
            spans[phase].append((end - begin) * 1000)
    for name, at in (("p50", 49), ("p95", 94)):
        print(f"{'':<22} {name} by phase: " + ", ".join(
            f"{phase} {_quantiles(values)[at]:.0f} ms" for phase, values in spans.items() if values
        ))  # fmt: skip


def _quantiles(values: list[float]) -> list[float]:
    return statistics.quantiles(values, n=100) if len(values) > 1 else values * 99


async def drive(
    url: str,
    args: argparse.Namespace,
    archives: list[Path],
    token: str,
    shape: str,
    database_url: str,
) -> int:
    uploads, verdicts, reads = Series(), Series(), Series()
    quiet_uploads, alone = Series(), Series()
    limits = httpx.Limits(max_connections=args.uploaders + args.readers + 4)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        # One submitter alone: the wait a person sees.
        quiet = [archives.pop() for _ in range(min(args.verdicts, len(archives)))]
        began = time.perf_counter()
        await uploader(client, quiet, token, began + 600, quiet_uploads, alone)
        took = time.perf_counter() - began
        print(f"\n{shape}: {len(alone.latencies_ms)} uploads one after the other")
        print(quiet_uploads.line("upload (201)", took))
        print(alone.line("upload → verdict", took))
        print(f"{'':<22} targets: p50 ≤ 500 ms, p95 ≤ 1000 ms: "
              + ("met" if alone.within(500, 1000) else "MISSED"))  # fmt: skip
        print_phases(database_url, alone.sent_at)
        began = time.perf_counter()
        until = began + args.seconds
        await asyncio.gather(
            *(
                uploader(client, archives, token, until, uploads, verdicts)
                for _ in range(args.uploaders)
            ),
            *(reader(client, until, reads, seed) for seed in range(args.readers)),
        )
        elapsed = time.perf_counter() - began
    print(f"\n{args.seconds:.0f} s of load ({elapsed:.1f} s with the last verdicts), "
          f"{args.uploaders} uploaders, {args.readers} readers, {shape}, "
          f"{os.cpu_count()} cores")  # fmt: skip
    print(uploads.line("upload (201)", args.seconds))
    print(verdicts.line("upload → verdict", args.seconds))
    print(reads.line("GET /api/v1/results", args.seconds))
    errors = quiet_uploads.errors + alone.errors + uploads.errors + verdicts.errors + reads.errors
    for error in errors[:20]:
        print("  error:", error)
    print(f"errors: {len(errors)}")
    return 1 if errors or not alone.within(500, 1000) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verdicts", type=int, default=20, help="uploads timed alone")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--uploaders", type=int, default=4)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--web-processes", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--verdict-workers",
        type=int,
        default=1,
        help="single-process workers that take only a verdict's jobs (PostgreSQL and Redis; "
        "as docker-compose.yml runs one)",
    )
    parser.add_argument(
        "--deployment",
        choices=("embedded", "postgresql+redis", "both"),
        default="both",
        help="the embedded defaults (SQLite, the embedded broker, one web process and one "
        "worker, as `make run`), PostgreSQL and Redis as deployments run it, or both",
    )
    parser.add_argument(
        "--postgres",
        default=os.environ.get("ENDPOINTS_PORTAL_TEST_POSTGRES_URL"),
        help="an admin URL of a PostgreSQL server on 127.0.0.1",
    )
    parser.add_argument("--redis", default=os.environ.get("ENDPOINTS_PORTAL_TEST_REDIS_URL"))
    args = parser.parse_args()
    kinds = ["embedded", "postgresql+redis"] if args.deployment == "both" else [args.deployment]
    if "postgresql+redis" in kinds:
        if not args.postgres or not args.redis:
            parser.error('PostgreSQL and Redis are needed: eval "$(bash .ci/services.sh)" first')
        for url in (args.postgres, args.redis):
            if "127.0.0.1" not in url and "localhost" not in url:
                parser.error(f"loopback only: {url}")
    failed = 0
    for kind in kinds:
        failed |= run_deployment(kind, args)
    return failed


@contextmanager
def deployment_database(kind: str, args: argparse.Namespace) -> Iterator[dict[str, str]]:
    """The settings of a database (and broker) of the run's own, dropped after."""
    if kind == "embedded":
        yield {}
        return
    import psycopg
    import redis

    name = f"portal_load_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(args.postgres, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    redis_url = f"{args.redis}/3"
    redis.Redis.from_url(redis_url).flushdb()
    try:
        yield {"DATABASE_URL": args.postgres.rsplit("/", 1)[0] + "/" + name, "REDIS_URL": redis_url}
    finally:
        with psycopg.connect(args.postgres, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run_deployment(kind: str, args: argparse.Namespace) -> int:
    embedded = kind == "embedded"
    # SQLite takes one web process and one worker, as `make run` starts them.
    web_processes, workers = (1, 1) if embedded else (args.web_processes, args.workers)
    verdict_workers = 0 if embedded else args.verdict_workers
    processes: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp, deployment_database(kind, args) as urls:
        data = Path(tmp) / "data"
        data.mkdir()
        log = Path(tmp) / "portal.log"
        try:
            settings = Settings(
                data_dir=data,
                database_url=urls.get("DATABASE_URL"),
                redis_url=urls.get("REDIS_URL"),
            )
            upgrade(settings.effective_database_url)
            database = Database(settings.effective_database_url)
            load_demo(database, settings)  # results to read, as on a real portal
            with database.session() as session:
                user = create_user(session=session, email="load@acme.example",
                                   password="load-test-password", role=Role.SUBMITTER,
                                   organization="Acme Corp")  # fmt: skip
                token = issue_token(session=session, user=user, name="load")[1]
                session.commit()
            database.dispose()
            print(f"{kind}: building bundles…", flush=True)
            count = int(args.uploaders * args.seconds / 2) + 8 + args.verdicts
            archives = make_bundles(count, Path(tmp) / "b")
            env = {
                key: value
                for key, value in os.environ.items()
                if key not in ("DATABASE_URL", "REDIS_URL", "ENDPOINTS_PORTAL_DATABASE_URL",
                               "ENDPOINTS_PORTAL_REDIS_URL")
            }  # fmt: skip
            env |= urls | {
                "ENDPOINTS_PORTAL_DATA_DIR": str(data),
                "ENDPOINTS_PORTAL_UPLOADS_PER_HOUR": "0",
            }
            port = free_port()
            python = sys.executable
            processes.append(start([python, "-m", "uvicorn", "app.asgi:app", "--host",
                                    "127.0.0.1", "--port", str(port), "--workers",
                                    str(web_processes), "--log-level", "warning"],
                                   env, log))  # fmt: skip
            # The embedded worker with its pool as `make run` starts it (the setting's
            # size); the deployed ones as many single-process workers.
            pool = [] if embedded else ["--concurrency", "1"]
            lanes = [["--verdicts-only"]] * verdict_workers + [[]] * workers
            for lane in lanes:
                processes.append(start([python, "-m", "app.cli", "worker", *pool, *lane,
                                        "--loglevel", "WARNING"], env, log))  # fmt: skip
            processes.append(start([python, "-m", "app.cli", "scheduler", "--loglevel",
                                    "WARNING"], env, log))  # fmt: skip
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.3)
            else:
                print(log.read_text()[-3000:])
                return 1
            print(f"portal on {url}; loading for {args.seconds:.0f} s…", flush=True)
            shape = f"{kind}: {web_processes} web processes, {workers} workers" + (
                f" and {verdict_workers} for verdicts only" if verdict_workers else ""
            )
            return asyncio.run(
                drive(url, args, archives, token, shape, settings.effective_database_url)
            )
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()


if __name__ == "__main__":
    raise SystemExit(main())
