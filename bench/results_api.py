"""How fast the results API and the explorer page answer on a large cohort.

Builds a cohort of 200 published curves × 16 points (rows written directly: the pipeline
is measured elsewhere), starts the portal's web process on 127.0.0.1 and times requests:
p50/p95 for GET /api/v1/results (plain and with an SLA) and for the /results page, and the
size of the chart payload. Targets: p95 under 100 ms, payload under 1 MB, on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.db.migrate import upgrade  # noqa: E402
from app.db.models import (  # noqa: E402
    Job,
    Organization,
    Publication,
    PublishedCurve,
    StoredFile,
    Submission,
)
from app.db.session import Database  # noqa: E402
from app.publishing.domain.snapshot import CurveSnapshot, PublishedPoint  # noqa: E402
from app.results.domain.pareto import step_curve  # noqa: E402
from app.settings import Settings  # noqa: E402

CONCURRENCIES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1100)


def curve_data(rng: random.Random, system: str) -> dict[str, object]:
    peak, cap = rng.uniform(120, 260), rng.uniform(10_000, 80_000)
    points = []
    for c in CONCURRENCIES:
        per_user = peak / (1 + c / 96)
        tps = min(c * per_user, cap) * 0.97
        points.append(
            PublishedPoint(
                dir=f"r{c}",
                concurrency=c,
                region="med_concurrency",
                system_tps=tps,
                tps_per_user=per_user,
                tpot_p90_ms=1000 / per_user,
                ttft_p90_ms=35 + 0.9 * c,
                system_tps_per_kw=tps / 10.08,
            )
        )
    steps = step_curve([(p.tps_per_user or 0.0, p.system_tps) for p in points])
    return CurveSnapshot(
        system=system,
        system_dir=system,
        benchmark_model="llama3_1-8b",
        dataset="cnn_dailymail",
        is_agentic=False,
        x_metric="tps_per_user",
        c_max=None,
        c_min=None,
        regions=None,
        points=points,
        step_line=[list(v) for v in steps.line],
        frontier=[list(v) for v in steps.frontier],
        offline_ceiling=None,
        elected_offline=None,
    ).stored()


def build(database: Database, curves: int) -> None:
    rng = random.Random(7)
    with database.session() as session:
        for i in range(curves):
            org = Organization(slug=f"org-{i}", name=f"Organisation {i}")
            blob = StoredFile(sha256=f"{i:064x}", size=1, kind="archive")
            sub = Submission(
                organization=org,
                archive=blob,
                archive_format="tar.gz",
                original_filename="b.tar.gz",
                bundle_root="x",
                content_digest=f"{i}",
                state="finalized",
                for_review=True,
                eligible_cohort="2026-12-C0",
            )
            session.add(Job(kind="check_submission", submission=sub, state="succeeded"))
            publication = Publication(
                submission=sub, cohort="2026-12-C0", status=("verified", "provisional")[i % 2]
            )
            publication.curves = [
                PublishedCurve(
                    benchmark_model="llama3_1-8b",
                    dataset="cnn_dailymail",
                    is_agentic=False,
                    system_name=f"System {i}",
                    organization=org.name,
                    division="Standardized",
                    availability="Available",
                    accelerator_model="Accelerator X",
                    accelerator_count=8,
                    provisioned_power_kw=10.08,
                    data=curve_data(rng, f"System {i}"),
                )
            ]
            session.add(publication)
        session.commit()


def timed(client: httpx.Client, url: str, n: int) -> tuple[float, float, int]:
    times, size = [], 0
    for _ in range(n):
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        response.raise_for_status()
        size = len(response.content)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))], size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--curves", type=int, default=200)
    parser.add_argument("--requests", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), database_url=os.environ.get("DATABASE_URL"))
        upgrade(settings.effective_database_url)
        database = Database(settings.effective_database_url)
        build(database, args.curves)
        database.dispose()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        env = {**os.environ, "ENDPOINTS_PORTAL_DATA_DIR": tmp, "ENDPOINTS_PORTAL_DEMO_DATA": "0"}
        server = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--no-worker", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=30) as client:
                for _ in range(100):
                    try:
                        client.get("/healthz")
                        break
                    except httpx.HTTPError:
                        time.sleep(0.2)
                cases = {
                    "api /api/v1/results": "/api/v1/results?benchmark=llama3_1-8b",
                    "api with SLA": "/api/v1/results?benchmark=llama3_1-8b&ttft_p90_max_ms=200"
                    "&tps_per_user_min=60&concurrency_min=8",
                    "page /results": "/results?benchmark=llama3_1-8b&tps_per_user_min=60",
                }
                for url in cases.values():  # warm up
                    client.get(url)
                print(
                    f"cohort: {args.curves} curves x {len(CONCURRENCIES)} points; "
                    f"{args.requests} requests each, sequential, over loopback"
                )
                print(f"{'request':<22} {'p50 ms':>8} {'p95 ms':>8} {'bytes':>10}")
                payload = 0
                worst = 0.0
                for name, url in cases.items():
                    p50, p95, size = timed(client, url, args.requests)
                    worst = max(worst, p95)
                    if name.startswith("api /"):
                        payload = size
                    print(f"{name:<22} {p50:>8.1f} {p95:>8.1f} {size:>10}")
                print(
                    f"chart payload: {payload / 1e6:.2f} MB (target < 1 MB); "
                    f"worst p95 {worst:.1f} ms (target < 100 ms)"
                )
                print(f"p95_ms={worst:.1f}")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
