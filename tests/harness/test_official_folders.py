"""`recompute` on run folders laid out as the official client writes them (written here by
hand from the spec, harness-metrics §4 and §6): its `settings.load_pattern` decides the
arithmetic, not the harness's own block, which these folders do not have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.load.engine import RunConfig
from harness.load.loadgen import (
    official_summary,
    options_from_run_dir,
    write_config,
    write_summary,
)
from harness.metrics import events as ev
from harness.metrics.events import EventWriter, Output, Prompt
from harness.metrics.tokens import TokenCounter

MS = 1_000_000
OUTPUTS = {
    "a": Output(["lorem", " ipsum dolor"]),
    "b": Output(["sed", " do eiusmod tempor"]),
    "c": Output(["sit", " amet"]),
}
# issued, first chunk, complete (ms): the latest-issued request (c) is not the last to end.
TIMES = {"a": (10, 30, 90), "b": (20, 45, 120), "c": (40, 50, 80)}


def official_folder(path: Path, load_pattern: dict[str, Any]) -> Path:
    path.mkdir()
    config = {
        "name": "official-run",
        "type": "online",
        "model_params": {"name": "demo-model", "streaming": True},
        "datasets": [{"name": "perf", "type": "performance"}],
        "settings": {"load_pattern": load_pattern},
        "endpoint_config": {"endpoints": ["http://127.0.0.1:1"], "api_key": "<redacted>"},
    }
    (path / "config.yaml").write_text(yaml.safe_dump(config))
    writer = EventWriter(path / "events.jsonl")
    writer.write(ev.SESSION_STARTED, 0, "", None)
    writer.write(ev.START_TRACKING, 5 * MS, "", None)
    for uuid, (issued, first, done) in TIMES.items():
        writer.write(ev.ISSUED, issued * MS, uuid, Prompt(text="hello world").to_data())
        writer.write(ev.RECV_FIRST, first * MS, uuid, None)
        writer.write(ev.COMPLETE, done * MS, uuid, OUTPUTS[uuid].to_data(), finish_reason="stop")
    writer.write(ev.STOP_TRACKING, 130 * MS, "", None)
    writer.write(ev.SESSION_ENDED, 131 * MS, "", None)
    writer.close()
    return path


def recomputed(folder: Path, tokenizer: Path) -> dict[str, Any]:
    assert main(["recompute", str(folder), "--tokenizer", str(tokenizer)]) == 0
    summary: dict[str, Any] = json.loads(
        (folder / "performance" / "result_summary.json").read_text()
    )
    return summary


@pytest.fixture
def counter(local_tokenizer_dir: Path) -> TokenCounter:
    return TokenCounter.from_path(local_tokenizer_dir)


def test_a_poisson_run_uses_the_legacy_loadgen_window(
    tmp_path: Path, local_tokenizer_dir: Path, counter: TokenCounter
) -> None:
    folder = official_folder(tmp_path / "poisson", {"type": "poisson", "target_qps": 20.0})
    r = recomputed(folder, local_tokenizer_dir)
    tokens = sum(counter.count_output(o) for o in OUTPUTS.values())
    # Window: completion of the latest-issued request (c, 80 ms) − first issue (10 ms).
    assert r["legacy_loadgen_window_duration_ns"] == 70 * MS
    assert r["qps"] == pytest.approx(2 / 0.070)  # (completed − 1) / window
    assert r["tps"] == pytest.approx(tokens / 0.070)
    assert r["duration_ns"] == 115 * MS  # the tracked window is still reported


def test_the_legacy_window_can_be_turned_off_and_concurrency_never_uses_it(
    tmp_path: Path, local_tokenizer_dir: Path, counter: TokenCounter
) -> None:
    tokens = sum(counter.count_output(o) for o in OUTPUTS.values())
    off = official_folder(
        tmp_path / "off",
        {"type": "poisson", "target_qps": 20.0, "use_legacy_loadgen_qps_metrics": False},
    )
    concurrency = official_folder(
        tmp_path / "conc", {"type": "concurrency", "target_concurrency": 4}
    )
    for folder in (off, concurrency):
        r = recomputed(folder, local_tokenizer_dir)
        assert r["legacy_loadgen_window_duration_ns"] is None
        assert r["qps"] == pytest.approx(3 / 0.115)  # completed / tracked window
        assert r["tps"] == pytest.approx(tokens / 0.115)
    assert recomputed(concurrency, local_tokenizer_dir)["run_config"]["load_pattern"] == {
        "type": "concurrency",
        "target_qps": None,
        "target_concurrency": 4,
    }


def test_the_official_summary_run_configuration_is_kept(
    tmp_path: Path, local_tokenizer_dir: Path
) -> None:
    folder = official_folder(tmp_path / "kept", {"type": "poisson", "target_qps": 20.0})
    run_config = {
        "load_pattern": {"type": "poisson", "target_qps": 20.0, "target_concurrency": None},
        "warmup": {"enabled": True, "n_requests": 32, "salt": True, "drain": True},
        "scheduler_random_seed": 7,
        "dataloader_random_seed": 9,
    }
    (folder / "performance").mkdir()
    (folder / "performance" / "result_summary.json").write_text(
        json.dumps({"run_config": run_config, "qps": 1.0})
    )
    assert recomputed(folder, local_tokenizer_dir)["run_config"] == run_config


def test_an_all_failed_run_recomputes_without_throughput(
    tmp_path: Path, local_tokenizer_dir: Path
) -> None:
    folder = tmp_path / "failed"
    folder.mkdir()
    (folder / "config.yaml").write_text(
        yaml.safe_dump(
            {"settings": {"load_pattern": {"type": "concurrency", "target_concurrency": 2}}}
        )
    )
    writer = EventWriter(folder / "events.jsonl")
    writer.write(ev.START_TRACKING, 0, "", None)
    for n, uuid in enumerate(("x", "y", "z")):
        writer.write(ev.ISSUED, (10 + n) * MS, uuid, Prompt(text="hello world").to_data())
        writer.write(ev.ERROR, (50 + n) * MS, uuid, ["ErrorData", "HTTPError", "HTTP 503"])
        writer.write(ev.COMPLETE, (50 + n) * MS, uuid, None)
    writer.close()
    ours = recomputed(folder, local_tokenizer_dir)
    assert (ours["n_samples_issued"], ours["n_samples_failed"]) == (3, 3)
    assert ours["n_samples_completed"] == 0 and ours["tps"] is None  # failures as failures
    args = ["recompute", str(folder), "--tokenizer", str(local_tokenizer_dir)]
    assert main([*args, "--official-failures"]) == 0
    official = json.loads((folder / "performance" / "result_summary.json").read_text())
    # The official arithmetic counts a failure as a completion (harness-metrics §4.2).
    assert official["n_samples_completed"] == 3 and official["n_samples_failed"] == 3
    assert official["qps"] == pytest.approx(3 / 0.052) and official["tps"] is None


def _stats(avg: float, p50: float, p90: float, p99: float) -> dict[str, Any]:
    return {"avg": avg, "percentiles": {"50.0": p50, "90.0": p90, "99.0": p99}}


# The concurrency folder's numbers, worked out by hand from harness-metrics §4: tracked
# window 5 → 120 ms; TTFT 20, 25, 10 ms; TPOT 60/2, 75/3, 30/1 ms; latency 80, 100, 40 ms;
# 3 + 4 + 2 output tokens. Percentiles are numpy's "lower" (sorted[floor(p/100 (n − 1))]).
OLD_SCHEMA_SUMMARY: dict[str, Any] = {
    "n_samples_issued": 3,
    "n_samples_completed": 3,
    "n_samples_failed": 0,
    "duration_ns": 115 * MS,
    "qps": 3 / 0.115,
    "tps": 9 / 0.115,
    "ttft": _stats(55 / 3 * MS, 20 * MS, 20 * MS, 20 * MS),
    "tpot": _stats(85 / 3 * MS, 30 * MS, 30 * MS, 30 * MS),
    "latency": _stats(220 / 3 * MS, 80 * MS, 80 * MS, 80 * MS),
    "output_sequence_lengths": _stats(3, 3, 3, 3),
}


def test_an_old_schema_summary_in_the_flat_layout_is_reproduced(
    tmp_path: Path, local_tokenizer_dir: Path
) -> None:
    folder = official_folder(tmp_path / "old", {"type": "concurrency", "target_concurrency": 4})
    # Older archives: result_summary.json beside config.yaml, without finish_reason_counts
    # and input_sequence_lengths.
    (folder / "result_summary.json").write_text(json.dumps(OLD_SCHEMA_SUMMARY))
    recomputed(folder, local_tokenizer_dir)
    report = (folder / "report.txt").read_text()
    assert "Compared with the run folder's own result_summary.json:" in report
    assert "DIFFERS" not in report
    for key in ("qps", "tps", "duration_ns", "ttft.90.0", "tpot.avg", "latency.99.0"):
        assert f"  {key}: official " in report and report.count("(equal)") >= 20
    assert "finish_reason_counts: not in the official summary (an older schema)" in report
    assert "input_sequence_lengths: not in the official summary (an older schema)" in report


def test_a_doctored_summary_is_named_where_it_differs(
    tmp_path: Path, local_tokenizer_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = official_folder(
        tmp_path / "doctored", {"type": "concurrency", "target_concurrency": 4}
    )
    (folder / "performance").mkdir()
    doctored = {**OLD_SCHEMA_SUMMARY, "tps": 2 * OLD_SCHEMA_SUMMARY["tps"]}
    (folder / "performance" / "result_summary.json").write_text(json.dumps(doctored))
    recomputed(folder, local_tokenizer_dir)
    report = (folder / "report.txt").read_text()
    assert [line.strip().split(":")[0] for line in report.splitlines() if "DIFFERS" in line] == [
        "tps"
    ]
    assert "differs from the folder's summary: tps: official 156.522" in capsys.readouterr().err


def test_a_non_streaming_run_has_no_ttft_or_tpot(tmp_path: Path, local_tokenizer_dir: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    config = {
        "model_params": {"name": "demo-model", "streaming": False},
        "settings": {"load_pattern": {"type": "concurrency", "target_concurrency": 2}},
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    writer = EventWriter(folder / "events.jsonl")
    writer.write(ev.START_TRACKING, 0, "", None)
    for uuid, (issued, _first, done) in TIMES.items():
        writer.write(ev.ISSUED, issued * MS, uuid, Prompt(text="hello world").to_data())
        whole = Output(OUTPUTS[uuid].content)  # non-streaming: one string, no first chunk
        writer.write(ev.COMPLETE, done * MS, uuid, whole.to_data(), finish_reason="stop")
    writer.close()
    official = {**OLD_SCHEMA_SUMMARY, "duration_ns": 120 * MS, "qps": 3 / 0.12,
                "tps": 9 / 0.12, "ttft": {}, "tpot": {}}  # fmt: skip
    (folder / "performance").mkdir()
    (folder / "performance" / "result_summary.json").write_text(json.dumps(official))
    r = recomputed(folder, local_tokenizer_dir)
    assert r["ttft"] == {} and r["tpot"] == {}
    assert r["output_sequence_lengths"]["total"] == 9 and r["tps"] == pytest.approx(9 / 0.12)
    report = (folder / "report.txt").read_text()
    assert "DIFFERS" not in report and "ttft." not in report and "tpot." not in report
    assert "TTFT: no data" in report


def test_the_official_failure_arithmetic_is_named_as_a_deliberate_difference(
    tmp_path: Path, local_tokenizer_dir: Path
) -> None:
    folder = official_folder(
        tmp_path / "failures", {"type": "concurrency", "target_concurrency": 4}
    )
    lines = (folder / "events.jsonl").read_text().splitlines()
    error = {"event_type": ev.ERROR, "timestamp_ns": 80 * MS, "sample_uuid": "c",
             "conversation_id": "", "turn": None,
             "data": ["ErrorData", "HTTPError", "HTTP 500"]}  # fmt: skip
    at = next(
        i for i, line in enumerate(lines) if '"sample_uuid":"c"' in line and "complete" in line
    )
    lines.insert(at, json.dumps(error))
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n")
    # The official client counted the failed request as a completion.
    (folder / "performance").mkdir()
    official = {**OLD_SCHEMA_SUMMARY, "n_samples_failed": 1}
    (folder / "performance" / "result_summary.json").write_text(json.dumps(official))
    recomputed(folder, local_tokenizer_dir)
    report = (folder / "report.txt").read_text()
    assert "DIFFERS" not in report
    assert (
        "n_samples_completed: official 3, recomputed 2 (differs on purpose: the 1 failed" in report
    )
    assert "recompute --official-failures gives its arithmetic" in report


requests_st = st.lists(
    st.tuples(
        st.integers(0, 500),  # issued (ms after tracking starts)
        st.integers(1, 200),  # TTFT (ms)
        st.integers(0, 300),  # streaming time (ms)
        st.integers(1, 6),  # words
        st.booleans(),  # failed
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(requests=requests_st, pattern=st.sampled_from(["concurrency", "poisson"]))
def test_a_harness_written_folder_recomputes_identically(  # type: ignore[no-untyped-def]
    requests, pattern: str, local_tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("run")
    config = RunConfig(endpoint="http://127.0.0.1:1", model="sim", load_pattern=pattern,
                       concurrency=4, target_qps=10.0, n_samples=len(requests))  # fmt: skip
    write_config(folder, config)
    writer = EventWriter(folder / "events.jsonl")
    writer.write(ev.START_TRACKING, 0, "", None)
    timeline: list[tuple[Any, int, str, str, Any]] = []
    for n, (issued, ttft, streaming, words, failed) in enumerate(requests):
        uuid = f"r{n}"
        timeline.append((issued * MS, 0, ev.ISSUED, uuid, Prompt(text="hello").to_data()))
        done = (issued + ttft + streaming) * MS
        if failed:
            timeline.append((done, 1, ev.ERROR, uuid, ["ErrorData", "HTTPError", "HTTP 503"]))
            timeline.append((done, 2, ev.COMPLETE, uuid, None))
            continue
        text = " ".join(["lorem"] * words)
        timeline.append(((issued + ttft) * MS, 1, ev.RECV_FIRST, uuid, None))
        output = Output(["lorem", text[len("lorem") :]])
        timeline.append((done, 2, ev.COMPLETE, uuid, output.to_data()))
    for ts, _order, kind, uuid, data in sorted(timeline):
        writer.write(
            kind, ts, uuid, data, finish_reason="stop" if kind == ev.COMPLETE and data else None
        )
    writer.write(ev.STOP_TRACKING, 900 * MS, "", None)
    writer.close()
    counter = TokenCounter.from_path(local_tokenizer_dir)
    first = write_summary(folder, counter, options_from_run_dir(folder))
    again = write_summary(folder, counter, options_from_run_dir(folder), official_summary(folder))
    assert again.result == first.result
    assert again.comparison and all(line.endswith("(equal)") for line in again.comparison)


def test_the_runs_own_tokenizer_is_found_as_the_official_client_finds_it(
    tmp_path: Path, local_tokenizer_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = official_folder(tmp_path / "named", {"type": "concurrency", "target_concurrency": 4})
    config = yaml.safe_load((folder / "config.yaml").read_text())

    def recompute_with(params: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str]:
        config["model_params"] = {"streaming": True, **params}
        (folder / "config.yaml").write_text(yaml.safe_dump(config))
        code = main(["recompute", str(folder)])
        written = folder / "performance" / "result_summary.json"
        summary = json.loads(written.read_text()) if code == 0 else None
        return code, summary, capsys.readouterr().err

    # tokenizer_name first; else a name that is a local folder with a tokenizer.
    for params in (
        {"name": "demo-model", "tokenizer_name": str(local_tokenizer_dir)},
        {"name": str(local_tokenizer_dir)},
    ):
        code, summary, _err = recompute_with(params)
        assert code == 0 and summary is not None
        assert summary["output_sequence_lengths"]["total"] == 9 and summary["tps"] is not None
    # A hub id cannot be fetched offline: say so rather than count nothing.
    code, _summary, err = recompute_with({"name": "x", "tokenizer_name": "meta-llama/Llama-3.1-8B"})
    assert code == 2 and "hub ids are not downloaded: pass --tokenizer" in err
    # No tokenizer at all: the official client's empty token metrics, with a warning.
    code, summary, err = recompute_with({"name": "openai/gpt-oss-120b"})
    assert code == 0 and summary is not None and summary["tps"] is None
    assert "no tokenizer for this run" in err
