"""The steady-state analysis (harness/analysis/steady_state.py) on timings whose shape is known."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.analysis.steady_state import (
    GATED,
    STATUSES,
    VERDICTS,
    Method,
    analyse_steady_state,
    coefficient_of_variation,
    mann_kendall,
    pettitt,
)
from harness.metrics.timings import Timings
from tests.support.timings import timings


def method(**overrides: object) -> Method:
    return Method(**{"super_pass_size": 100, "min_duration_s": 60.0, **overrides})  # type: ignore[arg-type]


# -- the statistics ---------------------------------------------------------------------


def _hamed_rao_z(x: list[float]) -> float:
    """§2.6's test written out term by term, as a second reading of the method."""
    n = len(x)
    s = sum((x[j] > x[i]) - (x[j] < x[i]) for i in range(n) for j in range(i + 1, n))
    counts: dict[float, int] = {}
    for v in x:
        counts[v] = counts.get(v, 0) + 1
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in counts.values())) / 18
    order = sorted(range(n), key=lambda i: x[i])
    ranks = [0.0] * n
    for rank, i in enumerate(order, start=1):
        ranks[i] = float(rank)
    mean = sum(ranks) / n
    dev = [r - mean for r in ranks]
    denominator = sum(d * d for d in dev)
    total = 0.0
    for k in range(1, n):
        rho = sum(dev[t] * dev[t - k] for t in range(k, n)) / denominator
        if abs(rho) > 1.96 / math.sqrt(n):
            total += (n - k) * (n - k - 1) * (n - k - 2) * rho
    factor = 1 + 2 / (n * (n - 1) * (n - 2)) * total
    var *= factor if factor > 0 else 1
    return 0.0 if s == 0 else (s - math.copysign(1, s)) / math.sqrt(var)


def test_mann_kendall_worked_by_hand() -> None:
    # S = 10 (every pair rises), Var(S) = 5·4·15/18; no lag's rank autocorrelation passes
    # 1.96/√5, so the Hamed–Rao factor is 1.
    trend = mann_kendall(np.arange(5.0))
    assert trend.z == pytest.approx(9 / math.sqrt(5 * 4 * 15 / 18))
    assert trend.p == pytest.approx(0.0275, abs=5e-4) and trend.direction == 1
    assert mann_kendall(-np.arange(5.0)).direction == -1
    assert mann_kendall(np.full(8, 3.0)).direction == 0
    # Four points can never be significant at 5 %; three are too few to test at all.
    assert mann_kendall(np.arange(4.0)).direction == 0
    assert not mann_kendall(np.arange(3.0)).sufficient


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 6).map(float), min_size=4, max_size=30))
def test_mann_kendall_on_the_raw_values_as_the_method_writes_it(x: list[float]) -> None:
    # Ties and serial correlation included: the same z as the term-by-term reading.
    assert mann_kendall(np.array(x)).z == pytest.approx(_hamed_rao_z(x), abs=1e-9)


def test_hamed_rao_discounts_serial_correlation() -> None:
    # A stationary AR(1) series (φ = 0.8) has no trend but wanders in long runs: the plain
    # test calls that a trend far more often than the corrected one.
    rng = np.random.default_rng(3)
    plain = corrected = 0
    for _ in range(200):
        noise, series = rng.normal(0, 1, 40), np.zeros(40)
        for k in range(1, 40):
            series[k] = 0.8 * series[k - 1] + noise[k]
        n = len(series)
        i, j = np.triu_indices(n, k=1)
        s = np.sign(series[j] - series[i]).sum()
        z = (s - np.sign(s)) / math.sqrt(n * (n - 1) * (2 * n + 5) / 18)
        plain += abs(z) > 1.96
        corrected += mann_kendall(series).direction != 0
    assert corrected < 0.7 * plain


def test_the_coefficient_of_variation_is_the_population_one() -> None:
    values = [10.0, 10.8, 9.4, 10.2]
    assert coefficient_of_variation(np.array(values)) == pytest.approx(
        statistics.pstdev(values) / statistics.mean(values)
    )
    assert coefficient_of_variation(np.array([3.0])) == 0.0
    assert coefficient_of_variation(np.array([-1.0, 1.0])) == 0.0  # a zero mean


def test_pettitt_finds_the_step() -> None:
    at, p = pettitt(np.r_[np.full(8, 1.0), np.full(8, 2.0)])
    assert at == 8 and p < 0.01
    false_alarms = sum(
        pettitt(np.random.default_rng(k).normal(0, 1, 16))[1] < 0.05 for k in range(100)
    )
    assert false_alarms <= 10
    assert pettitt(np.array([1.0, 1.0, 5.0])) == (0, 1.0)  # too few to test


# -- the analysis -----------------------------------------------------------------------


def test_a_steady_run_is_windowable_from_the_first_super_pass_after_warm_up() -> None:
    t = timings(2000)
    # Noise alone ends a plateau now and then (a 5 % test, four metrics, every width):
    # the method has no effect-size floor, so here the first one spans 8 super-passes.
    doc = analyse_steady_state(t, method(min_duration_s=30))
    assert doc["status"] == "windowable" and doc["verdict"] == "STEADY STATE"
    w = doc["window"]
    assert w["super_pass_start"] == 1 and w["super_pass_size"] == 100
    passes = w["super_pass_end"] - w["super_pass_start"] + 1
    assert passes >= 4 and w["n_samples"] == passes * 100 and w["n_failed"] == 0
    # The window's issue-time span: its first request's issue to its last one's.
    first, last = 100, 100 * (w["super_pass_end"] + 1) - 1
    assert w["duration_s"] == pytest.approx((t.issued[last] - t.issued[first]) / 1e9, abs=1e-3)
    assert w["start_s"] == pytest.approx((t.issued[first] - t.issued[0]) / 1e9, abs=1e-3)
    assert set(doc["state"]) >= set(GATED) and set(doc["state"].values()) == {"Plateau"}
    assert doc["anomaly"] is None and doc["drifting_up"] == [] and doc["method"]["warmup"] == 1
    assert set(doc["global_trend"].values()) == {"steady"}
    # The metrics are the window's requests' own: TPOT P90 of 100-token responses at
    # about 5 ms a token, and tokens/s over the issue-time span.
    m = doc["metrics"]
    assert m["tpot_p90_ms"] == pytest.approx(5.0, rel=0.05)
    assert m["tps_per_user"] == pytest.approx(1000 / m["tpot_p90_ms"], rel=1e-3)
    assert m["output_tokens"] == passes * 100 * 101
    assert m["system_tps"] == pytest.approx(m["output_tokens"] / w["duration_s"], rel=1e-3)
    assert len(doc["super_passes"]["tpot_p50"]) == 19  # 20 super-passes, 1 of them warm-up
    assert any("P90" in note for note in doc["notes"])  # the rules' reading, beside


def test_a_level_shift_is_an_anomaly_and_the_first_plateau_is_reported() -> None:
    doc = analyse_steady_state(
        timings(2000, lambda i: 5.0 if i < 1200 else 6.5), method(min_duration_s=30)
    )
    assert doc["verdict"] == "anomaly" and doc["status"] == "windowable"
    assert doc["window"]["super_pass_start"] == 1 and doc["window"]["super_pass_end"] <= 11
    anomaly = doc["anomaly"]
    # Pettitt's rank statistic on the super-passes' mean TPOT places the step within a
    # super-pass or two of 12 (the first level's highest means pull it left).
    assert 10 <= anomaly["change_point_sp"] <= 12
    assert anomaly["delta_pct"] == pytest.approx(30, abs=3)
    assert anomaly["pettitt_p"] < 0.05 and len(anomaly["plateaus"]) >= 2
    # From the plateau's start to the end TPOT rises, as the method flags it: the step
    # explains it, so the verdict is the anomaly.
    assert "tpot_p50" in doc["drifting_up"]


def test_a_ramp_that_never_settles_is_drifting_up() -> None:
    doc = analyse_steady_state(timings(2000, lambda i: 5.0 * (1 + i / 2000)), method())
    assert doc["verdict"] == "drifting_up"
    assert {"tpot_p50", "tpot_p95"} <= set(doc["drifting_up"])
    # The first plateau is reported, however short: here too brief to be official.
    assert doc["window"]["super_pass_start"] == 1
    assert doc["status"] == "insufficient_duration"


def test_a_run_getting_faster_is_never_called_drifting_down() -> None:
    doc = analyse_steady_state(timings(2000, lambda i: 5.0 * (1 - i / 4000)), method())
    assert doc["global_trend"]["tpot_p50"] == "down" and doc["drifting_up"] == []
    assert doc["verdict"] != "drifting_down"
    assert doc["anomaly"] is not None and doc["anomaly"]["delta_pct"] < 0
    assert doc["verdict"] == "anomaly"


def test_coverage_statuses() -> None:
    short = analyse_steady_state(timings(80), method())
    assert short["status"] == "partial_dataset" and short["verdict"] == "not found"
    assert "less than one super-pass" in short["reason"]
    few = analyse_steady_state(timings(400), method())  # 4 super-passes, 1 of them warm-up
    assert few["status"] == "insufficient_passes" and few["window"] is None
    assert "fewer than 4" in few["reason"]
    brief = analyse_steady_state(timings(2000), method(min_duration_s=3600))
    assert brief["status"] == "insufficient_duration" and brief["window"] is not None


def test_the_trailing_partial_super_pass_is_one() -> None:
    doc = analyse_steady_state(timings(1050), method(min_duration_s=1))
    assert doc["n_super_passes"] == 11
    assert len(doc["super_passes"]["tpot_p50"]) == 10  # 11, one of them warm-up
    assert doc["window"]["super_pass_end"] == 10 and doc["window"]["n_samples"] == 950


def test_unfinished_requests_keep_their_place_in_the_issue_order() -> None:
    # Requests 550–599 never completed: super-pass 5 is half empty, the rest unchanged.
    whole = analyse_steady_state(timings(2000), method())
    gaps = analyse_steady_state(timings(2000, unfinished=lambda i: 550 <= i < 600), method())
    assert gaps["n_requests"] == 2000 and gaps["n_unfinished"] == 50
    for name in ("tpot_p50", "ttft_p95"):
        a, b = whole["super_passes"][name], gaps["super_passes"][name]
        assert [x for k, x in enumerate(a) if k != 4] == [x for k, x in enumerate(b) if k != 4]
    w = gaps["window"]
    if w["super_pass_start"] <= 5 <= w["super_pass_end"]:
        passes = w["super_pass_end"] - w["super_pass_start"] + 1
        assert w["n_samples"] == passes * 100 - 50 and w["n_unfinished"] == 50


def test_an_error_burst_breaks_the_window() -> None:
    doc = analyse_steady_state(timings(2000, fail=lambda i: 1000 <= i < 1100), method())
    w = doc["window"]
    assert w["super_pass_end"] < 10  # super-pass 10 measured nothing
    assert doc["super_passes"]["tpot_p50"][10 - 1] is None
    assert any(lo > 10 for lo, _ in doc["plateaus"])


def test_the_first_plateau_is_reported_even_when_a_later_one_is_longer() -> None:
    # Issued fast, then slowly: the first plateau spans 20 s, the second several minutes.
    # The method reports the first (MSER: precision chooses, not length or throughput).
    t = timings(2000, lambda i: 5.0 if i < 1000 else 6.5, gap_ms=lambda i: 20 if i < 1000 else 400)
    doc = analyse_steady_state(t, method(min_duration_s=120))
    assert doc["window"]["super_pass_start"] == 1 and doc["window"]["super_pass_end"] <= 9
    assert doc["status"] == "insufficient_duration"
    assert doc["anomaly"] is not None and doc["verdict"] == "anomaly"


def _shuffled(t: Timings, seed: int) -> Timings:
    order = np.random.default_rng(seed).permutation(len(t.issued))
    return Timings(
        t.issued[order], t.first[order], t.done[order], t.tokens[order], t.after[order],
        t.failed[order], np.random.default_rng(seed).permutation(t.unfinished),
    )  # fmt: skip


@settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    n=st.integers(0, 1500),
    size=st.integers(20, 200),
    step=st.floats(0.5, 2.0),
    at=st.integers(0, 1500),
    slope=st.floats(-0.5, 1.0),
    failing=st.floats(0, 0.3),
    lost=st.floats(0, 0.1),
    minimum=st.floats(0, 100),
    seed=st.integers(0, 1000),
)
def test_the_document_is_always_consistent_and_blind_to_the_events_order(
    n: int,
    size: int,
    step: float,
    at: int,
    slope: float,
    failing: float,
    lost: float,
    minimum: float,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    fails, gone = rng.random(max(n, 1)) < failing, rng.random(max(n, 1)) < lost
    t = timings(
        n,
        lambda i: 5.0 * (step if i >= at else 1.0) * (1 + slope * i / max(n, 1)),
        seed=seed,
        fail=lambda i: fails[i],
        unfinished=lambda i: gone[i],
    )
    m = Method(super_pass_size=size, min_duration_s=minimum)
    doc = analyse_steady_state(t, m)
    assert analyse_steady_state(_shuffled(t, seed), m) == doc
    assert doc["status"] in STATUSES and doc["verdict"] in VERDICTS
    assert doc["verdict"] != "drifting_down"
    assert doc["n_super_passes"] == -(-n // size)
    w = doc["window"]
    assert (w is None) == (doc["verdict"] == "not found")
    if w is None:
        assert doc["status"] in ("partial_dataset", "insufficient_passes") and doc["reason"]
        return
    assert 1 <= w["super_pass_start"] <= w["super_pass_end"] < doc["n_super_passes"]
    passes = w["super_pass_end"] - w["super_pass_start"] + 1
    members = min(passes * size, n - w["super_pass_start"] * size)
    assert passes >= 4 and w["n_samples"] + w["n_failed"] + w["n_unfinished"] == members
    assert (doc["status"] == "windowable") == (w["duration_s"] >= minimum)
    assert all(doc["state"][g] == "Plateau" for g in GATED)  # the window is a plateau
    assert [w["super_pass_start"], w["super_pass_end"]] == doc["plateaus"][0]  # the first
