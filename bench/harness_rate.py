"""How fast the harness drives a streaming endpoint, and how well it measures.

1. Rate: against `serve-sim --instant` (no delays, 100 streamed chunks per response) at
   concurrency 16 for a few seconds, for each client (the lean asyncio client the harness
   uses by default, and httpx). Prints requests/s, chunks/s and the client's CPU time
   per request, side by side. The official client reached 3.5k-5.3k requests/s in this
   setup on a 2-core machine.
2. Accuracy: against a paced simulator (50 ms TTFT, 5 ms per token), the client's TTFT and
   TPOT medians next to the server's own timestamps.

The simulator runs in its own process; everything stays on 127.0.0.1.
The last line is `requests_per_s=<x>` for the harness's default client.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.dataset import Sample  # noqa: E402
from harness.loadgen import RunConfig, run_point  # noqa: E402
from harness.sim import sim_token_counter  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_sim(*args: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "serve-sim", "--port", str(port), *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("serve-sim did not start")


def measure_rate(url: str, client: str, seconds: float, out: Path) -> dict[str, float]:
    samples = [Sample(i, prompt=f"hello world {i}") for i in range(1000)]
    config = RunConfig(
        endpoint=url, model="sim", concurrency=16, duration_s=seconds, client=client, max_tokens=100
    )
    cpu0, wall0 = time.process_time(), time.monotonic()
    result = run_point(config, samples, out, counter=None)
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    r = result.summary.result
    completed = r["n_samples_completed"]
    duration_s = (r["duration_ns"] or 1) / 1e9
    return {
        "requests_per_s": completed / duration_s,
        "chunks_per_s": completed * 100 / duration_s,
        # Summarising events.jsonl is included: it is part of a run's client cost.
        "cpu_ms_per_request": cpu / max(completed, 1) * 1e3,
        "failed": r["n_samples_failed"],
        "wall_s": wall,
    }


def measure_accuracy(seconds: float, out: Path) -> dict[str, float]:
    proc, url = start_sim(
        "--ttft-ms",
        "50",
        "--tpot-ms",
        "5",
        "--output-tokens",
        "64",
        "--batch-slowdown",
        "0",
        "--max-batch",
        "1024",
    )
    try:
        samples = [Sample(i, prompt=f"hello {i}") for i in range(100)]
        config = RunConfig(endpoint=url, model="sim", concurrency=16, duration_s=seconds)
        result = run_point(config, samples, out, sim_token_counter())
        server = httpx.get(f"{url}/sim/stats", timeout=10).json()
    finally:
        proc.terminate()
        proc.wait()
    r = result.summary.result

    def median(values: list[float]) -> float:
        ordered = sorted(values)
        return ordered[len(ordered) // 2]

    return {
        "client_ttft_p50_ms": r["ttft"]["percentiles"]["50.0"] / 1e6,
        "server_ttft_p50_ms": median(server["ttft_ns"]) / 1e6,
        "client_tpot_p50_ms": r["tpot"]["percentiles"]["50.0"] / 1e6,
        "server_tpot_p50_ms": median(server["tpot_ns"]) / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="per rate measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_sim("--instant", "--chunks", "100")
        try:
            rates = {
                c: measure_rate(url, c, args.seconds, Path(tmp) / c) for c in ("fast", "httpx")
            }
        finally:
            proc.terminate()
            proc.wait()
        accuracy = measure_accuracy(min(args.seconds, 5.0), Path(tmp) / "paced")
    print(f"machine: {os.cpu_count()} cores; serve-sim --instant, 100 chunks/response, c=16")
    print(f"{'client':<8} {'requests/s':>11} {'chunks/s':>11} {'CPU ms/req':>11} {'failed':>7}")
    for name, r in rates.items():
        print(
            f"{name:<8} {r['requests_per_s']:>11.0f} {r['chunks_per_s']:>11.0f} "
            f"{r['cpu_ms_per_request']:>11.3f} {r['failed']:>7.0f}"
        )
    fast, slow = rates["fast"], rates["httpx"]
    print(
        f"fast/httpx requests/s ratio: {fast['requests_per_s'] / slow['requests_per_s']:.1f}x; "
        f"vs the official client's 3500-5300/s: {fast['requests_per_s'] / 5300:.2f}x of the best"
    )
    print("measurement error at 50 ms TTFT, 5 ms per token (client vs server timestamps):")
    for metric, digits in (("ttft", 2), ("tpot", 3)):
        ours = accuracy[f"client_{metric}_p50_ms"]
        server = accuracy[f"server_{metric}_p50_ms"]
        print(
            f"  {metric.upper()} p50 {ours:.{digits}f} ms vs {server:.{digits}f} ms "
            f"(error {ours - server:+.{digits}f} ms)"
        )
    print(json.dumps({"rates": rates, "accuracy": accuracy}))
    print(f"requests_per_s={fast['requests_per_s']:.0f}")


if __name__ == "__main__":
    main()
