"""The parity set: official-schema event logs whose steady state §2.6's method decides.

Each log (``tests/harness/data/steady_state``, made by ``tests/support/event_logs.py``)
is read as the portal reads a point's events (the summary, with the requests' timings)
and analysed with one super-pass per dataset pass (20 requests) and a 5 s minimum. What
each must give follows from its shape: the window (within one super-pass at its end),
the level shift, and the whole-tail drift.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.analysis.steady_state import Method, analyse_steady_state
from harness.metrics.summary import SummaryOptions, summarize
from harness.metrics.timings import RequestTimings
from harness.sim import sim_token_counter
from tests.support.event_logs import DATA, SUPER_PASS

METHOD = Method(super_pass_size=SUPER_PASS, min_duration_s=5.0)
TPOT = {"tpot_p50", "tpot_p95"}

# name → (status, verdict, window (start, end), anomaly's change point or None,
#         drifting_up ⊇, global_trend of TPOT P50)
EXPECTED: dict[str, tuple[str, str, tuple[int, int] | None, int | None, set[str], str]] = {
    "constant": ("windowable", "STEADY STATE", (1, 23), None, set(), "steady"),
    # +2 % a super-pass: four super-passes pass the gates, five do not; the tail rises.
    "slow_drift_up": ("insufficient_duration", "drifting_up", (1, 4), 12, TPOT, "up"),
    # −1.5 % a super-pass: short plateaus, their levels apart: the method reports the
    # anomaly, never a drift down.
    "drift_down": ("insufficient_duration", "anomaly", (1, 4), 12, set(), "down"),
    # +30 % TPOT from super-pass 12: the first plateau, and the step disclosed.
    "level_shift": ("windowable", "anomaly", (1, 12), 12, set(), "steady"),
    # ±4 % from one super-pass to the next: CoV 0.04, within the 0.08 bound.
    "noisy_plateau": ("windowable", "STEADY STATE", (1, 23), None, set(), "steady"),
    "too_few_super_passes": ("insufficient_passes", "not found", None, None, set(), "insufficient"),
    # Super-pass 10 failed whole (it measured nothing), and five requests never completed.
    "failures_mid_run": ("windowable", "STEADY STATE", (1, 9), None, set(), "steady"),
}


def _analyse(path: Path) -> dict[str, Any]:
    timings = RequestTimings()
    summarize(
        path, sim_token_counter(), SummaryOptions(load_pattern="concurrency"), observer=timings
    )
    return analyse_steady_state(timings.timings(), METHOD)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_method_decides_each_shape(name: str) -> None:
    status, verdict, window, change_point, rising, tpot_trend = EXPECTED[name]
    doc = _analyse(DATA / f"{name}.jsonl.gz")
    seen = {k: doc[k] for k in ("status", "verdict", "window", "plateaus", "anomaly")}
    assert (doc["status"], doc["verdict"]) == (status, verdict), seen
    if window is None:
        assert doc["window"] is None and doc["reason"]
    else:
        w = doc["window"]
        assert w["super_pass_start"] == window[0], seen
        assert abs(w["super_pass_end"] - window[1]) <= 1, seen
        assert doc["plateaus"][0] == [w["super_pass_start"], w["super_pass_end"]]
    if change_point is None:
        assert doc["anomaly"] is None, seen
    else:
        assert abs(doc["anomaly"]["change_point_sp"] - change_point) <= 1, seen
    assert rising <= set(doc["drifting_up"]) and (rising or not doc["drifting_up"]), seen
    assert doc["global_trend"]["tpot_p50"] == tpot_trend, seen


def test_the_shapes_carry_their_own_facts() -> None:
    shift = _analyse(DATA / "level_shift.jsonl.gz")
    assert shift["anomaly"]["delta_pct"] == pytest.approx(30, abs=5)
    assert len(shift["anomaly"]["plateaus"]) >= 2
    down = _analyse(DATA / "drift_down.jsonl.gz")
    assert down["anomaly"]["delta_pct"] < -5
    failures = _analyse(DATA / "failures_mid_run.jsonl.gz")
    assert failures["n_unfinished"] == 5 and failures["n_requests"] == 24 * SUPER_PASS
    assert failures["super_passes"]["tpot_p50"][10 - 1] is None  # super-pass 10
    assert any(lo == 11 for lo, _hi in failures["plateaus"])


@settings(max_examples=5, deadline=None, derandomize=True)
@given(st.randoms(use_true_random=False))
def test_the_analysis_is_blind_to_the_order_events_appear_in(tmp_path_factory, rnd) -> None:  # type: ignore[no-untyped-def]
    # Interleave the requests' events at random, each request's own in order, tracking
    # markers first and last: the same requests give the same steady state.
    source = DATA / "level_shift.jsonl.gz"
    lines = gzip.decompress(source.read_bytes()).decode().splitlines(keepends=True)
    head, body, tail = lines[0], lines[1:-1], lines[-1]
    per_sample: dict[str, list[str]] = {}
    for line in body:
        per_sample.setdefault(line.split('"sample_uuid":', 1)[1][:36], []).append(line)
    queues = list(per_sample.values())
    mixed: list[str] = []
    while queues:
        queue = queues[rnd.randrange(len(queues))]
        mixed.append(queue.pop(0))
        if not queue:
            queues.remove(queue)
    path = tmp_path_factory.mktemp("mixed") / "events.jsonl"
    path.write_text(head + "".join(mixed) + tail)
    assert _analyse(path) == _analyse(source)
