"""Summaries computed from hand-written events whose true numbers are known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.metrics import events as ev
from harness.metrics.events import EventWriter, Output, Prompt
from harness.metrics.summary import SummaryOptions, summarize
from harness.metrics.tokens import TokenCounter

MS = 1_000_000


def _write(path: Path, rows: list[tuple]) -> Path:  # type: ignore[type-arg]
    writer = EventWriter(path)
    for row in rows:
        writer.write(*row[:4], **(row[4] if len(row) > 4 else {}))
    writer.close()
    return path


def _sample(
    uuid: str,
    issued: int,
    first: int | None,
    done: int,
    output: Output | None,
    error: str | None = None,
) -> list[tuple]:  # type: ignore[type-arg]
    rows: list[tuple] = [(ev.ISSUED, issued, uuid, Prompt(text="hello world").to_data())]  # type: ignore[type-arg]
    if first is not None:
        rows.append((ev.RECV_FIRST, first, uuid, None))
    if error:
        rows.append((ev.ERROR, done, uuid, ["ErrorData", "HTTPError", error]))
        rows.append((ev.COMPLETE, done, uuid, None))
    else:
        rows.append(
            (
                ev.COMPLETE,
                done,
                uuid,
                output.to_data() if output else None,
                {"finish_reason": "stop"},
            )
        )
    return rows


@pytest.fixture
def counter(local_tokenizer_dir: Path) -> TokenCounter:
    return TokenCounter.from_path(local_tokenizer_dir)


def test_known_run(tmp_path: Path, counter: TokenCounter) -> None:
    rows = [
        (ev.SESSION_STARTED, 0, "", None),
        # warmup: issued before tracking starts, never counted
        *_sample("w", 1 * MS, 2 * MS, 3 * MS, Output(["lorem", " ipsum"])),
        (ev.START_TRACKING, 10 * MS, "", None),
        # 1 + 4 tokens; first chunk at +50 ms, 4 tokens after it over 40 ms → TPOT 10 ms
        *_sample("a", 10 * MS, 60 * MS, 100 * MS, Output(["lorem", " ipsum dolor sit amet"])),
        # 1 + 2 tokens; first at +30 ms, done 20 ms later → TPOT 10 ms
        *_sample("b", 20 * MS, 50 * MS, 70 * MS, Output(["sed", " do eiusmod"])),
        # a failure: not a completion in our arithmetic
        *_sample("c", 30 * MS, None, 40 * MS, None, error="HTTP 503: overloaded"),
        (ev.STOP_TRACKING, 100 * MS, "", None),
        (ev.SESSION_ENDED, 101 * MS, "", None),
    ]
    path = _write(tmp_path / "events.jsonl", rows)
    summary = summarize(path, counter, SummaryOptions())
    r = summary.result
    assert (r["n_samples_issued"], r["n_samples_completed"], r["n_samples_failed"]) == (3, 2, 1)
    assert r["n_samples_dropped"] == 0
    assert r["duration_ns"] == 90 * MS  # last tracked completion − START
    assert r["ttft"]["percentiles"]["50.0"] == 30 * MS and r["ttft"]["max"] == 50 * MS
    assert r["tpot"]["min"] == r["tpot"]["max"] == 10 * MS
    assert r["latency"]["total"] == 90 * MS + 50 * MS
    assert r["output_sequence_lengths"]["total"] == 5 + 3
    assert r["input_sequence_lengths"]["total"] == 2 * 3
    assert r["qps"] == pytest.approx(2 / 0.09)
    assert r["tps"] == pytest.approx(8 / 0.09)
    assert r["finish_reason_counts"]["stop"] == 2
    assert any("failures" in note for note in summary.notes)

    official = summarize(path, counter, SummaryOptions(failures_as_completions=True)).result
    assert official["n_samples_completed"] == 3  # the official client's arithmetic
    assert official["latency"]["total"] == 90 * MS + 50 * MS + 10 * MS


def test_unfinished_requests_are_dropped_not_completed(
    tmp_path: Path, counter: TokenCounter
) -> None:
    rows = [
        (ev.START_TRACKING, 0, "", None),
        *_sample("a", 0, 10 * MS, 20 * MS, Output(["lorem", " ipsum"])),
        (ev.ISSUED, 5 * MS, "z", Prompt(text="hello").to_data()),
        (ev.RECV_FIRST, 15 * MS, "z", None),
        (ev.STOP_TRACKING, 30 * MS, "", None),
    ]
    r = summarize(_write(tmp_path / "e.jsonl", rows), counter, SummaryOptions()).result
    assert (r["n_samples_issued"], r["n_samples_completed"], r["n_samples_dropped"]) == (2, 1, 1)
    assert r["ttft"]["total"] == 10 * MS + 10 * MS  # TTFT recorded for the unfinished one too


def test_poisson_uses_the_legacy_window(tmp_path: Path, counter: TokenCounter) -> None:
    rows = [
        (ev.START_TRACKING, 0, "", None),
        *_sample("a", 10 * MS, 20 * MS, 50 * MS, Output(["lorem", " ipsum"])),
        *_sample("b", 30 * MS, 40 * MS, 90 * MS, Output(["lorem", " ipsum"])),
        *_sample("c", 60 * MS, 70 * MS, 80 * MS, Output(["lorem", " ipsum"])),
    ]
    r = summarize(
        _write(tmp_path / "e.jsonl", rows), counter, SummaryOptions(load_pattern="poisson")
    ).result
    # window: first issue (10 ms) → completion of the latest-issued request (c, 80 ms)
    assert r["legacy_loadgen_window_duration_ns"] == 70 * MS
    assert r["qps"] == pytest.approx(2 / 0.07)
    assert r["duration_ns"] == 90 * MS


def test_malformed_lines_are_reported_with_their_number(
    tmp_path: Path, counter: TokenCounter
) -> None:
    path = _write(
        tmp_path / "e.jsonl",
        [
            (ev.START_TRACKING, 0, "", None),
            *_sample("a", 0, 10 * MS, 20 * MS, Output(["lorem", " x"])),
        ],
    )
    with path.open("a") as fh:
        fh.write('{"event_type": "sample.issued", "timestamp_ns": "soon"}\n{not json\n')
    summary = summarize(path, counter, SummaryOptions())
    assert summary.result["n_samples_completed"] == 1
    assert [p.split(":")[0] for p in summary.problems] == ["line 5", "line 6"]


def test_without_a_tokenizer_token_metrics_are_empty(tmp_path: Path) -> None:
    rows = [
        (ev.START_TRACKING, 0, "", None),
        *_sample("a", 0, 10 * MS, 20 * MS, Output(["a", " b"])),
    ]
    summary = summarize(_write(tmp_path / "e.jsonl", rows), None, SummaryOptions())
    assert summary.result["tps"] is None and summary.result["tpot"] == {}
    assert summary.result["ttft"]["total"] == 10 * MS
    assert json.dumps(summary.result)  # serialisable as is


def test_agentic_interactivity_counts_every_completed_turn(
    tmp_path: Path, counter: TokenCounter
) -> None:
    """Rules §1.1: over all completed turns of all trajectories, including the turns
    trajectories issue after STOP_PERFORMANCE_TRACKING (a failed turn adds nothing)."""
    tracked, late, broken = Output(["lorem", " ipsum dolor"]), Output(["sit", " amet"]), None
    rows = [
        (ev.SESSION_STARTED, 0, "", None),
        (ev.START_TRACKING, 10 * MS, "", None),
        *_sample("t1", 10 * MS, 40 * MS, 110 * MS, tracked),  # 100 ms of serving
        (ev.STOP_TRACKING, 115 * MS, "", None),
        *_sample("t2", 120 * MS, 130 * MS, 170 * MS, late),  # 50 ms, after STOP
        *_sample("t3", 125 * MS, None, 140 * MS, broken, error="HTTP 500: boom"),
        (ev.SESSION_ENDED, 200 * MS, "", None),
    ]
    path = _write(tmp_path / "events.jsonl", rows)
    r = summarize(path, counter, SummaryOptions(load_pattern="agentic_inference")).result
    tokens = counter.count_output(tracked) + counter.count_output(late)
    assert r["output_tokens_per_turn_total"] == tokens
    assert r["e2e_turn_time_seconds_total"] == pytest.approx(0.150)
    assert r["e2e_avg_interactivity"] == pytest.approx(tokens / 0.150)
    # The tracked set is still the window's: one issued, one completed.
    assert (r["n_samples_issued"], r["n_samples_completed"]) == (1, 1)
