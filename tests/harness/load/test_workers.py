"""A point driven by several worker processes: one events.jsonl, one clock, one summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.load.dataset import Sample
from harness.load.engine import RunConfig
from harness.load.loadgen import run_point
from harness.load.workers import merge_events, shares
from harness.metrics.events import peak_in_flight, read_events
from harness.sim import SimConfig, sim_token_counter

SAMPLES = [Sample(i, prompt=f"lorem ipsum {i}") for i in range(40)]


def test_two_workers_measure_the_point_one_process_measures(sim, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    endpoint = sim(SimConfig(ttft_ms=5, tpot_ms=1, output_tokens=20, output_spread=0))
    runs = {}
    for workers in (1, 2):
        config = RunConfig(endpoint=endpoint.url, model="sim", concurrency=6, n_samples=120,
                           warmup_requests=6, workers=workers)  # fmt: skip
        runs[workers] = run_point(config, SAMPLES, tmp_path / f"w{workers}", sim_token_counter())
    one, two = runs[1].summary.result, runs[2].summary.result
    assert (two["n_samples_issued"], two["n_samples_completed"], two["n_samples_failed"]) == (
        120, 120, 0,
    )  # fmt: skip
    assert two["output_sequence_lengths"]["total"] == one["output_sequence_lengths"]["total"]
    assert set(two) == set(one)  # the same summary, field for field
    folder = tmp_path / "w2"
    assert not list(folder.glob("events.worker-*"))
    lines = list(read_events(folder / "events.jsonl"))
    times = [event["timestamp_ns"] for _, event in lines]
    kinds = [event["event_type"] for _, event in lines]
    assert kinds[0] == "session.started" and kinds[-1] == "session.ended"
    start = kinds.index("session.start_performance_tracking")
    stop = kinds.index("session.stop_performance_tracking")
    # Warm-up before the window, every tracked request inside it, one clock throughout.
    assert kinds[1:start].count("sample.issued") == 6
    assert kinds[start + 1 : stop].count("sample.issued") == 120
    assert times[start] <= min(times[start + 1 : stop]) and times[stop] >= max(times[:stop])
    assert peak_in_flight(folder / "events.jsonl") <= 6
    # The dataset is covered as one process covers it: the same sample indices.
    index_maps = [
        json.loads((tmp_path / f"w{w}" / "sample_idx_map.json").read_text())["performance"]
        for w in (1, 2)
    ]
    assert sorted(index_maps[0].values()) == sorted(index_maps[1].values())


def test_poisson_and_offline_split_over_workers(sim, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    endpoint = sim(SimConfig(ttft_ms=1, tpot_ms=0.2, output_tokens=10))
    poisson = RunConfig(endpoint=endpoint.url, model="sim", load_pattern="poisson",
                        target_qps=200, duration_s=1.5, workers=2)  # fmt: skip
    r = run_point(poisson, SAMPLES, tmp_path / "poisson", None).summary.result
    assert 200 * 1.5 * 0.7 <= r["n_samples_issued"] <= 200 * 1.5 * 1.3
    offline = RunConfig(endpoint=endpoint.url, model="sim", load_pattern="offline", workers=2)
    o = run_point(offline, SAMPLES, tmp_path / "offline", None).summary.result
    assert o["n_samples_issued"] == o["n_samples_completed"] == len(SAMPLES)
    index = json.loads((tmp_path / "offline" / "sample_idx_map.json").read_text())["performance"]
    assert sorted(index.values()) == list(range(len(SAMPLES)))


def test_shares_split_the_load_and_agentic_runs_refuse_workers() -> None:
    base = RunConfig(endpoint="http://127.0.0.1:9", model="m", concurrency=7, n_samples=10,
                     warmup_requests=3, workers=3)  # fmt: skip
    parts = shares(base, 40)
    assert [p.concurrency for p in parts] == [3, 2, 2]
    assert [p.n_samples for p in parts] == [4, 3, 3] and sum(p.warmup_requests for p in parts) == 3
    assert len(shares(RunConfig(endpoint="", model="m", concurrency=2, workers=4), 1)) == 2
    qps = shares(RunConfig(endpoint="", model="m", load_pattern="poisson", target_qps=9.0,
                           duration_s=1, workers=3), 1)  # fmt: skip
    assert [p.target_qps for p in qps] == [3.0, 3.0, 3.0] and len(
        {p.scheduler_seed for p in qps}
    ) == 3
    agentic = RunConfig(endpoint="", model="m", load_pattern="agentic_inference", workers=2)
    with pytest.raises(ValueError, match="--workers applies to"):
        agentic.validate()


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    files=st.lists(st.lists(st.integers(0, 50), max_size=12), min_size=1, max_size=4),
    session=st.lists(st.integers(0, 50), max_size=4),
)
def test_merged_events_are_in_time_order_and_keep_each_files_order(
    files: list[list[int]], session: list[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("merge")
    paths = []

    def line(ts: int, uuid: str) -> str:
        return json.dumps({"event_type": "e", "timestamp_ns": ts, "sample_uuid": uuid}) + "\n"

    for k, stamps in enumerate(files):
        path = folder / f"w{k}.jsonl"
        path.write_text("".join(line(ts, f"{k}-{i}") for i, ts in enumerate(sorted(stamps))))
        paths.append(path)
    parent = [(ts, line(ts, "").encode()) for ts in sorted(session)]
    merge_events(parent, paths, folder / "events.jsonl")
    merged = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    assert len(merged) == sum(map(len, files)) + len(session)
    assert [e["timestamp_ns"] for e in merged] == sorted(e["timestamp_ns"] for e in merged)
    for k in range(len(files)):
        mine = [e["sample_uuid"] for e in merged if e["sample_uuid"].startswith(f"{k}-")]
        assert mine == [f"{k}-{i}" for i in range(len(files[k]))]
