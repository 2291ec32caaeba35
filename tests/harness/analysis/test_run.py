"""``analyze`` on runs the harness makes against serve-sim with faults injected."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.analysis.run import NoSuperPassSize, analyse_run, dataset_size, run_method
from harness.analysis.steady_state import Method
from harness.cli import main
from harness.load.dataset import load_dataset
from harness.load.engine import RunConfig
from harness.load.loadgen import RunResult, options_from_run_dir, run_point
from harness.sim import SimConfig, sim_token_counter
from tests.support.sim import RunningSim
from tests.support.tokenizers import CHAT_TEMPLATE

SUPER_PASS = 30  # the dataset below: one pass


@pytest.fixture
def prompts(tmp_path: Path) -> Path:
    path = tmp_path / "prompts.jsonl"
    path.write_text(
        "".join(
            json.dumps({"prompt": f"hello world the lookup {i}"}) + "\n" for i in range(SUPER_PASS)
        )
    )
    return path


def _run(
    sim: Callable[[SimConfig], RunningSim],
    prompts: Path,
    where: Path,
    tpot_ms: float = 10,
    **faults: object,
) -> RunResult:
    """20 super-passes at concurrency 16: 100 ms TTFT, 20 tokens at *tpot_ms*, faults by
    the order requests arrive. Delays long against a machine busy with two suites (whose
    scheduling moved a 20 ms TTFT and a 2 ms TPOT by a tenth and more, enough that no
    window held every gated metric steady)."""
    endpoint = sim(
        SimConfig(
            ttft_ms=100, tpot_ms=tpot_ms, output_tokens=20, output_spread=0, batch_slowdown=0,
            **faults,  # type: ignore[arg-type]
        )
    )  # fmt: skip
    config = RunConfig(
        endpoint=endpoint.url, model="sim", concurrency=16, n_samples=20 * SUPER_PASS,
        abort_after_failures=None,
    )  # fmt: skip
    return run_point(config, load_dataset(prompts), where, sim_token_counter())


def _analyse(run: RunResult) -> dict:  # type: ignore[type-arg]
    method = Method(super_pass_size=SUPER_PASS, min_duration_s=0.5)
    doc = analyse_run(run.run_dir, sim_token_counter(), options_from_run_dir(run.run_dir), method)
    assert doc.steady_state is not None
    return doc.steady_state


def test_a_level_shift_is_found_where_the_server_slowed(sim, prompts, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # From request 330 (super-pass 11) every token takes 1.5 times as long: 10 ms, then
    # 15 ms, far from a busy machine's scheduling noise (at 5 ms against 7.5 ms, and a
    # 20 ms TTFT, a loaded machine once broke the plateaus).
    run = _run(sim, prompts, tmp_path / "run", shift_after=11 * SUPER_PASS, shift_factor=1.5)
    doc = _analyse(run)
    # The step is found whatever else a loaded machine does to TTFT after it (a drift in
    # TTFT would take the verdict over, as the rules order them).
    seen = {k: doc[k] for k in ("status", "verdict", "window", "plateaus")}
    assert doc["anomaly"] is not None, (seen, doc["super_passes"].get("tpot_p50"))
    assert doc["verdict"] in ("anomaly", "drifting_up")
    assert doc["window"]["super_pass_end"] <= 11 and 9 <= doc["anomaly"]["change_point_sp"] <= 12
    assert doc["anomaly"]["delta_pct"] == pytest.approx(50, abs=12)


def test_a_ramp_that_never_settles_is_drifting_up(sim, prompts, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Each token a little slower with every request: +60 % over the run.
    doc = _analyse(_run(sim, prompts, tmp_path / "run", tpot_drift_per_1k=1.0))
    assert doc["verdict"] == "drifting_up", doc
    assert "tpot_p50" in doc["drifting_up"]


def test_an_error_burst_is_outside_the_window_and_on_the_time_series(  # type: ignore[no-untyped-def]
    sim, prompts, tmp_path
) -> None:
    run = _run(
        sim,
        prompts,
        tmp_path / "run",
        error_burst_start=10 * SUPER_PASS,
        error_burst_count=SUPER_PASS,
    )
    doc = _analyse(run)
    # Super-pass 10 failed whole: it measured nothing, and no plateau spans it.
    assert doc["super_passes"]["tpot_p50"][10 - 1] is None
    assert all(not lo <= 10 <= hi for lo, hi in doc["plateaus"])
    series = json.loads((run.run_dir / "analysis" / "timeseries.json").read_text())
    assert sum(series["failed"]) == SUPER_PASS == run.summary.result["n_samples_failed"]


def test_analyze_writes_the_spec_s_names(sim, prompts, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = _run(sim, prompts, tmp_path / "run")
    assert dataset_size(run.run_dir) == SUPER_PASS  # the run recorded its dataset's size
    tokenizer = tmp_path / "tok"
    tokenizer.mkdir()
    sim_token_counter().tokenizer.save(str(tokenizer / "tokenizer.json"))
    argv = ["analyze", str(run.run_dir), "--tokenizer", str(tokenizer), "--min-duration-s", "0.5"]
    assert main(argv) == 0
    doc = json.loads((run.run_dir / "analysis" / "steady_state.json").read_text())
    assert doc["status"] in ("windowable", "insufficient_passes", "insufficient_duration")
    assert doc["method"]["super_pass_size"] == SUPER_PASS and doc["method"]["min_duration_s"] == 0.5
    if doc["window"]:
        assert set(doc["window"]) >= {
            "super_pass_start",
            "super_pass_end",
            "super_pass_size",
            "n_samples",
            "duration_s",
        }
        assert set(doc["state"].values()) <= {"Plateau", "Drifting Up", "Drifting Down"}
    assert (run.run_dir / "analysis" / "timeseries.json").is_file()
    # The report draws the same, with the window shaded.
    assert (
        main(["report", str(run.run_dir), "--tokenizer", str(tokenizer), "--min-duration-s", "0.5"])
        == 0
    )
    page = (run.run_dir / "analysis" / "report.html").read_text()
    assert "steady state" in page and "var steady = " in page
    # Without a recorded dataset size the super-pass must be given.
    config = run.run_dir / "config.yaml"
    config.write_text(config.read_text().replace(f"samples: {SUPER_PASS}", "samples: null"))
    with pytest.raises(NoSuperPassSize, match="--superpass-size"):
        run_method(run.run_dir, 16)
    assert main(argv) == 2
    # §6.2 by default: 600 s up to concurrency 32, 1,200 s above.
    assert run_method(run.run_dir, 16, super_pass_size=5).min_duration_s == 600
    assert run_method(run.run_dir, 64, super_pass_size=5).min_duration_s == 1200


def test_analyze_counts_with_the_chat_template_the_run_was_made_with(  # type: ignore[no-untyped-def]
    sim, prompts, local_tokenizer_dir, tmp_path
) -> None:
    """Reasoning goes through the chat template: analyze counts it with the run's own
    template (recorded by ``run --chat-template``) unless told otherwise, as recompute does."""
    server = sim(SimConfig(ttft_ms=1, tpot_ms=0.2, output_tokens=4, reasoning_tokens=3))
    marked = tmp_path / "marked.jinja"  # two more marker tokens in each reasoning
    marked.write_text(CHAT_TEMPLATE.replace("<|think|>", "<|think|> <|think|> <|think|> ", 1))
    run_dir = tmp_path / "run"
    made = main(
        ["run", "--endpoint", server.url, "--model", "sim", "--dataset", str(prompts),
         "--concurrency", "4", "--n-samples", "20", "--tokenizer", str(local_tokenizer_dir),
         "--chat-template", str(marked), "--output", str(run_dir)]
    )  # fmt: skip
    assert made == 0

    def analysed_tokens(*extra: str) -> float:
        argv = ["analyze", str(run_dir), "--superpass-size", "5", "--min-duration-s", "0.1"]
        assert main([*argv, *extra]) == 0
        series = json.loads((run_dir / "analysis" / "timeseries.json").read_text())
        return float(sum(v * series["bin_s"] for v in series["output_tps"] if v is not None))

    recorded = json.loads((run_dir / "performance" / "result_summary.json").read_text())
    own = analysed_tokens()
    assert own == pytest.approx(recorded["output_sequence_lengths"]["total"])
    tokenizer_s = analysed_tokens(
        "--chat-template", str(local_tokenizer_dir / "tokenizer_config.json")
    )
    assert own - tokenizer_s == pytest.approx(20 * 2)  # two markers fewer per response
