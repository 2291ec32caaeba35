"""A demo point's events give back its summary under the portal's re-count."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.checks.domain.findings import Severity
from app.demo.events import DemoRun, output_lengths, write_events
from app.demo.tokenizer import DemoTokenCounter
from app.runs.domain.retokenize import Reported, analyse
from harness.metrics.events import peak_in_flight, read_events


@st.composite
def runs(draw: st.DrawFn) -> DemoRun:
    requests = draw(st.integers(1, 400))
    per_request = draw(st.integers(2, 300))
    tokens = requests * per_request + draw(st.integers(0, requests))
    return DemoRun(
        requests=requests,
        concurrency=draw(st.integers(1, 64)),
        output_tokens=tokens,
        ttft_p90_ns=draw(st.floats(1e5, 5e9)),
        tpot_p90_ns=draw(st.floats(1e5, 2e8)),
        duration_ns=draw(st.floats(1e9, 1e13)),
        truncated=draw(st.integers(0, requests // 20)),  # the share the re-count calls normal
        turns=draw(st.sampled_from([1, 4])),
        seed=draw(st.integers(0, 2**32 - 1)),
    )


def reported(run: DemoRun) -> Reported:
    return Reported(
        total_output_tokens=run.output_tokens,
        system_tps=run.output_tokens / (run.duration_ns / 1e9),
        tpot_p90_ms=run.tpot_p90_ns / 1e6,
        tps_per_user=1e9 / run.tpot_p90_ns,
        ttft_p90_ms=run.ttft_p90_ns / 1e6,
        duration_ms=run.duration_ns / 1e6,
        n_samples_completed=run.requests,
        n_samples_issued=run.requests,
    )


@settings(max_examples=60, deadline=None, derandomize=True)
@given(run=runs())
def test_the_recount_of_demo_events_agrees_with_the_summary(
    run: DemoRun, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("events") / "events.jsonl.gz"
    write_events(path, run)
    pattern = "agentic_inference" if run.turns > 1 else "concurrency"
    analysis = analyse(path, DemoTokenCounter(), reported(run), "p", load_pattern=pattern)
    recount = analysis.recount
    assert recount.n_samples_completed == recount.n_samples_issued == run.requests
    assert recount.n_samples_failed == 0
    assert recount.total_output_tokens == run.output_tokens
    assert recount.ttft_p90_ms == pytest.approx(run.ttft_p90_ns / 1e6, rel=1e-6, abs=1e-6)
    assert recount.tpot_p90_ms == pytest.approx(run.tpot_p90_ns / 1e6, rel=1e-6, abs=1e-6)
    errors = [f for f in analysis.findings if f.severity != Severity.INFO]
    assert not errors, [f.message for f in errors]
    assert analysis.requests is not None and len(analysis.requests) == run.requests
    # At most `concurrency` requests in flight at any moment.
    assert peak_in_flight(path) <= run.concurrency


def test_agentic_demo_events_are_conversations_of_turns(tmp_path: Path) -> None:
    run = DemoRun(requests=40, concurrency=2, output_tokens=4000, ttft_p90_ns=5e7,
                  tpot_p90_ns=1e7, duration_ns=1e11, turns=4)  # fmt: skip
    path = tmp_path / "events.jsonl"
    write_events(path, run)
    issued = [e for _, e in read_events(path) if e["event_type"] == "sample.issued"]
    turns: dict[str, list[int]] = {}
    for event in issued:
        turns.setdefault(event["conversation_id"], []).append(event["turn"])
    assert len(turns) == 10 and all(t == [1, 2, 3, 4] for t in turns.values())


def test_output_lengths_sum_to_the_total_with_two_tokens_each() -> None:
    rng = np.random.default_rng(7)
    lengths = output_lengths(rng, 1000, 128_417)
    assert int(lengths.sum()) == 128_417 and int(lengths.min()) >= 2
    assert np.percentile(lengths, 90) / lengths.mean() == pytest.approx(1.4, abs=0.15)
    with pytest.raises(ValueError, match="two tokens each"):
        output_lengths(rng, 10, 19)
