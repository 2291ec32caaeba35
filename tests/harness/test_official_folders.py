"""`recompute` on run folders laid out as the official client writes them (written here by
hand from the spec, harness-metrics §4 and §6): its `settings.load_pattern` decides the
arithmetic, not the harness's own block, which these folders do not have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import events as ev
from harness.cli import main
from harness.events import EventWriter, Output, Prompt
from harness.tokens import TokenCounter

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
