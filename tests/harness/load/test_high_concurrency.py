"""Thousands of streams in flight at once against the simulator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.load.dataset import Sample
from harness.load.engine import RunConfig
from harness.load.loadgen import run_point
from harness.metrics.events import peak_in_flight
from harness.sim import SimConfig

STREAMS = 4096


@pytest.mark.slow
def test_the_harness_holds_4096_streams_in_flight(sim, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Every request streams for about half a second, so all slots are busy at once.
    endpoint = sim(SimConfig(ttft_ms=300, tpot_ms=20, output_tokens=10, output_spread=0,
                             max_batch=100_000, batch_slowdown=0))  # fmt: skip
    samples = [Sample(i, prompt=f"hello {i}") for i in range(100)]
    config = RunConfig(endpoint=endpoint.url, model="sim", concurrency=STREAMS,
                       n_samples=2 * STREAMS)  # fmt: skip
    r = run_point(config, samples, tmp_path / "run", None).summary.result
    assert (r["n_samples_issued"], r["n_samples_completed"], r["n_samples_failed"]) == (
        2 * STREAMS, 2 * STREAMS, 0,
    )  # fmt: skip
    assert peak_in_flight(tmp_path / "run" / "events.jsonl") == STREAMS


def test_too_few_open_files_is_said_before_anything_is_sent() -> None:
    # In a child whose hard limit is 512 files, 1,000 connections cannot be opened.
    script = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512))\n"
        "from harness.load.engine import ensure_open_files\n"
        "ensure_open_files(200)\n"  # within the limit: nothing to do
        "ensure_open_files(1000)\n"
    )
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert child.returncode != 0
    assert "1000 connections need 1256 open files, but this process may open at most 512" in (
        child.stderr
    )
