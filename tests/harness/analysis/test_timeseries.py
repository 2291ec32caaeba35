"""A run binned over time, on requests whose timings are known."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from harness.analysis.timeseries import MAX_BINS, bin_requests

S = 1_000_000_000


def test_requests_are_binned_by_when_they_happened() -> None:
    # (issued, first chunk, done) in seconds; tokens, tokens after the first chunk, failed.
    rows = [
        (0.0, 0.5, 2.5, 21, 20, False),  # streams 20 tokens from 0.5 s to 2.5 s
        (0.2, 0.4, 0.9, 6, 5, False),
        (1.1, -1, 1.6, 0, 0, True),  # failed without a first chunk
        (2.2, 2.3, 3.3, 11, 10, False),
    ]
    issued, first, done, tokens, after, failed = (np.array(c) for c in zip(*rows, strict=True))

    def ns(a: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        return np.where(a < 0, -1, (a * S)).astype(np.int64)

    ts = bin_requests(ns(issued), ns(first), ns(done), tokens.astype(np.int64),
                      after.astype(np.int64), failed.astype(bool))  # fmt: skip
    assert ts["bin_s"] == 1 and ts["t_s"] == [0, 1, 2, 3]
    assert ts["issued"] == [2, 1, 1, 0]
    assert ts["completed"] == [1, 0, 1, 1] and ts["failed"] == [0, 1, 0, 0]
    assert ts["in_flight"] == [1, 1, 1, 0]  # at 1 s, 2 s, 3 s and the end
    # Request 1: 1 token at 0.5 s, then 10 tokens/s to 2.5 s; request 2: 1 + 5 in bin 0;
    # request 4: 1 at 2.3 s, then 10 tokens/s to 3.3 s.
    assert ts["output_tps"] == pytest.approx([1 + 5 + 1 + 5, 10, 5 + 1 + 7, 3])
    assert sum(ts["output_tps"]) == pytest.approx(21 + 6 + 11)
    assert ts["ttft_p90_ms"] == pytest.approx([200.0, None, 500.0, 100.0])
    assert ts["tpot_p50_ms"][0] == pytest.approx(100.0)  # 0.5 s over 5 tokens
    assert ts["last_issue_s"] == 2.2 and ts["end_s"] == 3.3 and ts["requests"] == 4


def test_a_long_run_has_at_most_max_bins_of_whole_seconds() -> None:
    n = 5000
    issued = np.linspace(0, 10 * MAX_BINS * S, n).astype(np.int64)
    done = issued + S
    ones = np.ones(n, dtype=np.int64)
    ts = bin_requests(issued, issued + S // 2, done, 2 * ones, ones, np.zeros(n, dtype=bool))
    assert len(ts["t_s"]) <= MAX_BINS and ts["bin_s"] == 11
    assert sum(ts["issued"]) == n and sum(ts["completed"]) == n
    # Rates are kept to 0.01 tokens/s: over a thousand bins of 11 s, well within 1 %.
    assert sum(v * ts["bin_s"] for v in ts["output_tps"]) == pytest.approx(2 * n, rel=0.01)


def test_report_draws_a_run_folder_offline(sim, dataset, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from harness.cli import main
    from harness.load.dataset import load_dataset
    from harness.load.engine import RunConfig
    from harness.load.loadgen import run_point
    from harness.sim import SimConfig, sim_token_counter

    endpoint = sim(SimConfig(ttft_ms=5, tpot_ms=1, output_tokens=20, output_spread=0))
    config = RunConfig(endpoint=endpoint.url, model="sim", concurrency=4, n_samples=40)
    run = run_point(config, load_dataset(dataset), tmp_path / "run", sim_token_counter())
    tokenizer = tmp_path / "tok"
    tokenizer.mkdir()
    sim_token_counter().tokenizer.save(str(tokenizer / "tokenizer.json"))
    assert main(["report", str(run.run_dir), "--tokenizer", str(tokenizer)]) == 0
    series = json.loads((run.run_dir / "analysis" / "timeseries.json").read_text())
    assert sum(series["issued"]) == 40 and sum(series["completed"]) == 40
    page = (run.run_dir / "analysis" / "report.html").read_text()
    assert "Plotly.newPlot" in page and "<script src=" not in page  # the script is inline
    assert '"requests": 40' in page and "TTFT P90" in page
