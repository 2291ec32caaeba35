"""A point counted in parts and merged gives the summary a single count gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.load.agentic import load_agentic
from harness.load.dataset import Sample
from harness.load.engine import RunConfig
from harness.load.loadgen import run_point
from harness.metrics.ranges import PartCounts, Precounted, count_part
from harness.metrics.summary import SummaryOptions, summarize
from harness.metrics.tokens import TokenCounter
from harness.sim import SimConfig
from tests.support.sim import RunningSim
from tests.support.sweeps import conversation


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, local_tokenizer_dir: Path) -> dict[str, Path]:
    """A streamed run with failures, and an agentic one with tool calls."""
    counter = TokenCounter.from_path(local_tokenizer_dir)
    base = tmp_path_factory.mktemp("ranges")
    with RunningSim(SimConfig(ttft_ms=1, tpot_ms=0.05, output_tokens=20, error_rate=0.1)) as sim:
        samples = [Sample(i, prompt=f"hello world the lookup {i}") for i in range(12)]
        run_point(
            RunConfig(endpoint=sim.url, model="sim", concurrency=4, n_samples=80,
                      abort_after_failures=None),
            samples, base / "plain", counter,
        )  # fmt: skip
        data = base / "agentic.jsonl"
        data.write_text(
            "".join(json.dumps(r) + "\n" for i in range(4) for r in conversation(f"c{i}"))
        )
        run_point(
            RunConfig(endpoint=sim.url, model="sim", load_pattern="agentic_inference",
                      concurrency=2),
            load_agentic(data), base / "agentic", counter,
        )  # fmt: skip
    return {"concurrency": base / "plain", "agentic_inference": base / "agentic"}


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    parts=st.integers(1, 5),
    block=st.integers(1, 40),
    kind=st.sampled_from(["concurrency", "agentic_inference"]),
)
def test_parts_merge_to_the_single_count(runs, local_tokenizer_dir, parts, block, kind) -> None:  # type: ignore[no-untyped-def]
    counter = TokenCounter.from_path(local_tokenizer_dir)
    events = runs[kind] / "events.jsonl"
    options = SummaryOptions(load_pattern=kind)
    whole = summarize(events, counter, options).result
    counted = [count_part(events, counter, k, parts, block_lines=block) for k in range(parts)]
    merged = summarize(events, Precounted(counted), options).result
    assert whole["output_sequence_lengths"]["total"] > 0 and whole["n_samples_failed"] >= 0
    assert merged == whole


def test_a_part_travels_as_a_file_and_a_missing_one_is_refused(  # type: ignore[no-untyped-def]
    runs, local_tokenizer_dir, tmp_path
) -> None:
    counter = TokenCounter.from_path(local_tokenizer_dir)
    events = runs["concurrency"] / "events.jsonl"
    first, second = (count_part(events, counter, k, 2, block_lines=7) for k in range(2))
    first.save(tmp_path / "0.npz")
    back = PartCounts.load(tmp_path / "0.npz")
    assert back.part == 0 and back.parts == 2 and (back.n_out == first.n_out).all()
    options = SummaryOptions()
    whole = summarize(events, counter, options).result
    assert summarize(events, Precounted([back, second]), options).result == whole
    with pytest.raises(ValueError, match=r"have \[0\] of 2"):
        Precounted([back])
    with pytest.raises(ValueError, match="part must be between 0 and 1"):
        count_part(events, counter, 2, 2)


def test_recompute_in_processes_and_from_parts_made_elsewhere(  # type: ignore[no-untyped-def]
    runs, local_tokenizer_dir, tmp_path
) -> None:
    from harness.cli import main

    tok = str(local_tokenizer_dir)
    source = runs["concurrency"]
    results = {}
    for name, extra in (("one", []), ("jobs", ["--jobs", "2"])):
        out = tmp_path / name
        assert (
            main(["recompute", str(source), "--tokenizer", tok, "--output", str(out), *extra]) == 0
        )
        results[name] = json.loads((out / "performance" / "result_summary.json").read_text())
    # Two parts counted "on other machines", sent back as files.
    files = []
    for k in range(2):
        files.append(str(tmp_path / f"part{k}.npz"))
        argv = [
            "count-part",
            str(source),
            "--part",
            str(k),
            "--parts",
            "2",
            "--output",
            files[-1],
            "--tokenizer",
            tok,
        ]
        assert main(argv) == 0
    out = tmp_path / "parts"
    assert (
        main(
            ["recompute", str(source), "--tokenizer", tok, "--output", str(out), "--counts", *files]
        )
        == 0
    )
    results["parts"] = json.loads((out / "performance" / "result_summary.json").read_text())
    assert results["one"] == results["jobs"] == results["parts"]
    assert (
        main(
            [
                "recompute",
                str(source),
                "--tokenizer",
                tok,
                "--output",
                str(out),
                "--counts",
                files[0],
            ]
        )
        == 2
    )
