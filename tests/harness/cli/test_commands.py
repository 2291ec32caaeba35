"""`endpoints-harness` as a user runs it: serve-sim, run, recompute (subprocesses, real HTTP)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support import PROJECT_ROOT
from tests.support.services import free_port


def _harness(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=timeout,
    )


def test_serve_sim_run_and_recompute(
    dataset: Path, local_tokenizer_dir: Path, tmp_path: Path
) -> None:
    port = free_port()
    sim = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "serve-sim",
            "--port",
            str(port),
            "--ttft-ms",
            "5",
            "--tpot-ms",
            "1",
            "--output-tokens",
            "16",
        ],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        run_dir = tmp_path / "run"
        result = _harness(
            "run",
            "--endpoint",
            url,
            "--model",
            "sim",
            "--dataset",
            str(dataset),
            "--tokenizer",
            str(local_tokenizer_dir),
            "--concurrency",
            "2",
            "--n-samples",
            "12",
            "--output",
            str(run_dir),
        )
        assert result.returncode == 0, result.stderr
        assert "completed 12/12" in result.stdout
        before = json.loads((run_dir / "performance/result_summary.json").read_text())
        again = _harness("recompute", str(run_dir), "--output", str(tmp_path / "again"))
        assert again.returncode == 0, again.stderr
        after = json.loads((tmp_path / "again/performance/result_summary.json").read_text())
        assert after == before
    finally:
        os.killpg(sim.pid, signal.SIGTERM)
        sim.wait(timeout=10)


def test_bad_inputs_exit_two_with_a_reason(tmp_path: Path) -> None:
    missing = _harness(
        "run",
        "--endpoint",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--dataset",
        str(tmp_path / "none.csv"),
        "--n-samples",
        "1",
        "--output",
        str(tmp_path / "o"),
    )
    assert missing.returncode == 2 and "no such dataset file" in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "ok"}\nnot json\n')
    result = _harness(
        "run",
        "--endpoint",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--dataset",
        str(bad),
        "--n-samples",
        "1",
        "--output",
        str(tmp_path / "o"),
    )
    assert result.returncode == 2 and "bad.jsonl:2" in result.stderr
    no_events = _harness("recompute", str(tmp_path))
    assert no_events.returncode == 2 and "events.jsonl" in no_events.stderr
