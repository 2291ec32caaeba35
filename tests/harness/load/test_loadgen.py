"""Runs against the simulated endpoint over real HTTP on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from submission_checker.models.loader import load_result_summary

from harness.load.dataset import load_dataset
from harness.load.engine import RunConfig
from harness.load.loadgen import run_point, write_summary
from harness.metrics.events import read_events
from harness.metrics.summary import SummaryOptions
from harness.metrics.tokens import TokenCounter
from harness.sim import SimConfig


@pytest.fixture
def counter(local_tokenizer_dir: Path) -> TokenCounter:
    return TokenCounter.from_path(local_tokenizer_dir)


def _run(  # type: ignore[no-untyped-def]
    sim,
    dataset: Path,
    tmp_path: Path,
    counter: TokenCounter,
    sim_config: SimConfig,
    **config: object,
):
    endpoint = sim(sim_config)
    run_config = RunConfig(endpoint=endpoint.url, model="sim", **config)  # type: ignore[arg-type]
    return run_point(run_config, load_dataset(dataset), tmp_path / "run", counter)


def test_closed_loop_run_writes_the_official_layout(sim, dataset, tmp_path, counter) -> None:  # type: ignore[no-untyped-def]
    result = _run(
        sim,
        dataset,
        tmp_path,
        counter,
        SimConfig(ttft_ms=5, tpot_ms=1, output_tokens=20, output_spread=0),
        concurrency=4,
        n_samples=40,
        warmup_requests=4,
    )
    run = result.run_dir
    for name in (
        "config.yaml",
        "events.jsonl",
        "performance/result_summary.json",
        "report.txt",
        "metrics/final_snapshot.json",
        "sample_idx_map.json",
    ):
        assert (run / name).is_file(), name
    r = json.loads((run / "performance/result_summary.json").read_text())
    assert (r["n_samples_issued"], r["n_samples_completed"], r["n_samples_failed"]) == (40, 40, 0)
    assert r["output_sequence_lengths"]["total"] == 40 * 20  # the simulator's exact length
    assert r["tpot"]["min"] > 0  # never negative: timestamps are taken in order
    assert r["ttft"]["min"] >= 5 * 1e6
    # The official checker reads it and derives the same throughput.
    summary, problems = load_result_summary(run / "performance/result_summary.json")
    assert summary is not None and problems == []
    assert summary.system_tps == pytest.approx(r["tps"], rel=1e-9)
    assert summary.tpot_p90_ms is not None and summary.tpot_p90_ms > 0


def test_recompute_gives_identical_numbers(sim, dataset, tmp_path, counter) -> None:  # type: ignore[no-untyped-def]
    result = _run(
        sim,
        dataset,
        tmp_path,
        counter,
        SimConfig(ttft_ms=2, tpot_ms=0.5, output_tokens=30),
        concurrency=3,
        n_samples=30,
    )
    original = (result.run_dir / "performance/result_summary.json").read_text()
    (result.run_dir / "performance/result_summary.json").unlink()
    write_summary(
        result.run_dir, counter, SummaryOptions(run_config=result.summary.result["run_config"])
    )
    assert (result.run_dir / "performance/result_summary.json").read_text() == original


def test_failures_are_failures_and_drops_are_excluded(sim, dataset, tmp_path, counter) -> None:  # type: ignore[no-untyped-def]
    result = _run(
        sim,
        dataset,
        tmp_path,
        counter,
        SimConfig(ttft_ms=1, tpot_ms=0.2, output_tokens=10, error_rate=0.3, drop_rate=0.2, seed=3),
        concurrency=4,
        n_samples=60,
    )
    r = result.summary.result
    assert r["n_samples_failed"] > 0
    assert r["n_samples_completed"] + r["n_samples_failed"] == r["n_samples_issued"] == 60
    errors = [
        e
        for _, e in read_events(result.run_dir / "events.jsonl")
        if e["event_type"] == "error.generic"
    ]
    assert len(errors) == r["n_samples_failed"]
    assert any("HTTP 503" in e["data"][2] for e in errors)  # overload
    assert len(errors) > sum("HTTP 503" in e["data"][2] for e in errors)  # and dropped streams


def test_duration_cap_drains_in_flight_requests(sim, dataset, tmp_path, counter) -> None:  # type: ignore[no-untyped-def]
    result = _run(
        sim,
        dataset,
        tmp_path,
        counter,
        SimConfig(ttft_ms=20, tpot_ms=2, output_tokens=50),
        concurrency=8,
        duration_s=0.5,
    )
    r = result.summary.result
    assert r["n_samples_dropped"] == 0
    assert r["n_samples_completed"] == r["n_samples_issued"] > 8


def test_drain_timeout_excludes_what_is_still_running(sim, dataset, tmp_path, counter) -> None:  # type: ignore[no-untyped-def]
    result = _run(
        sim,
        dataset,
        tmp_path,
        counter,
        SimConfig(ttft_ms=10, tpot_ms=20, output_tokens=200, output_spread=0),
        concurrency=4,
        duration_s=0.2,
        drain_timeout_s=0.1,
    )
    r = result.summary.result
    assert r["n_samples_dropped"] == 4
    assert r["n_samples_completed"] == 0
    assert "never finished" in (result.run_dir / "report.txt").read_text()


def test_offline_and_poisson_patterns(sim, dataset, tmp_path, counter) -> None:  # type: ignore[no-untyped-def]
    offline = _run(
        sim,
        dataset,
        tmp_path / "o",
        counter,
        SimConfig.instant(10),
        load_pattern="offline",
        n_samples=50,
    )
    assert offline.summary.result["n_samples_completed"] == 50
    poisson = _run(
        sim,
        dataset,
        tmp_path / "p",
        counter,
        SimConfig.instant(10),
        load_pattern="poisson",
        target_qps=200,
        n_samples=40,
    )
    r = poisson.summary.result
    assert r["n_samples_completed"] == 40
    assert r["legacy_loadgen_window_duration_ns"] is not None
    assert 40 < r["qps"] < 800  # open loop around the target rate


def test_invalid_configurations_say_what_is_wrong(dataset, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="--target-qps"):
        run_point(
            RunConfig(
                endpoint="http://127.0.0.1:9", model="m", load_pattern="poisson", n_samples=1
            ),
            load_dataset(dataset),
            tmp_path / "r",
            None,
        )
    with pytest.raises(ValueError, match="--duration or --n-samples"):
        run_point(
            RunConfig(endpoint="http://127.0.0.1:9", model="m"),
            load_dataset(dataset),
            tmp_path / "r",
            None,
        )


@pytest.mark.parametrize("client", ["fast", "httpx"])
def test_the_server_s_own_count_is_recorded_when_it_sends_one(  # type: ignore[no-untyped-def]
    sim, dataset, tmp_path, counter, client
) -> None:
    from harness.metrics.summary import Completed, summarize

    sim_config = SimConfig(ttft_ms=1, tpot_ms=0.1, output_tokens=12, output_spread=0.3)
    plain = _run(sim, dataset, tmp_path / "plain", counter, sim_config, n_samples=8, client=client)
    events = [e for _, e in read_events(plain.run_dir / "events.jsonl")]
    # Not asked for, a stream carries no count, and the request is the official client's.
    assert not any("usage" in e for e in events)
    asked = _run(
        sim, dataset, tmp_path / "asked", counter, sim_config,
        n_samples=8, client=client, request_usage=True,
    )  # fmt: skip
    completes = [
        e for _, e in read_events(asked.run_dir / "events.jsonl")
        if e["event_type"] == "sample.complete"
    ]  # fmt: skip
    assert len(completes) == 8
    assert all(e["usage"]["completion_tokens"] >= 1 for e in completes)
    seen: list[Completed] = []
    summarize(asked.run_dir / "events.jsonl", counter, SummaryOptions(), observer=seen.append)
    # The simulator counts its words, as the local tokenizer does.
    assert [c.server_tokens for c in seen] == [c.output_tokens for c in seen]
    # A non-streamed answer carries its count without being asked.
    whole = _run(
        sim, dataset, tmp_path / "whole", counter, sim_config,
        n_samples=4, client=client, streaming=False,
    )  # fmt: skip
    assert all(
        e["usage"]["completion_tokens"] >= 1
        for _, e in read_events(whole.run_dir / "events.jsonl")
        if e["event_type"] == "sample.complete"
    )
