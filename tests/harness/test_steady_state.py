"""The steady-state analysis (harness/steady_state.py) on timings whose shape is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.steady_state import (
    GATED,
    STATUSES,
    VERDICTS,
    Method,
    analyse_steady_state,
    mann_kendall,
    pettitt,
    relative_drift,
)
from tests.support.timings import timings


def method(**overrides: object) -> Method:
    return Method(**{"super_pass_size": 100, "min_duration_s": 60.0, **overrides})  # type: ignore[arg-type]


# -- the statistics ---------------------------------------------------------------------


def test_mann_kendall_worked_by_hand() -> None:
    # S = 10 (every pair rises), Var(S) = 5·4·15/18; a straight line detrends to a constant,
    # so the Hamed–Rao correction leaves the variance alone.
    trend = mann_kendall(np.arange(5.0))
    assert trend.z == pytest.approx(9 / math.sqrt(5 * 4 * 15 / 18))
    assert trend.p == pytest.approx(0.0275, abs=5e-4) and trend.direction == 1
    assert mann_kendall(-np.arange(5.0)).direction == -1
    assert mann_kendall(np.full(8, 3.0)).direction == 0
    # Four points can never be significant at 5 %: the reason for MIN_TREND_N.
    assert mann_kendall(np.arange(4.0)).direction == 0


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


def test_pettitt_finds_the_step() -> None:
    at, p = pettitt(np.r_[np.full(8, 1.0), np.full(8, 2.0)])
    assert at == 8 and p < 0.01
    false_alarms = sum(
        pettitt(np.random.default_rng(k).normal(0, 1, 16))[1] < 0.05 for k in range(100)
    )
    assert false_alarms <= 10


def test_relative_drift_is_the_fitted_change_over_the_median() -> None:
    assert relative_drift(np.array([10.0, 11.0, 12.0])) == pytest.approx(0.2 / 1.1)
    assert relative_drift(np.full(6, 4.0)) == pytest.approx(0.0, abs=1e-12)


# -- the analysis -----------------------------------------------------------------------


def test_a_steady_run_is_windowable_from_the_first_super_pass_after_warm_up() -> None:
    t = timings(2000)
    doc = analyse_steady_state(t, method())
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
    # The metrics are the window's requests' own: TPOT P90 of 100-token responses at
    # about 5 ms a token, and tokens/s over the issue-time span.
    m = doc["metrics"]
    assert m["tpot_p90_ms"] == pytest.approx(5.0, rel=0.05)
    assert m["tps_per_user"] == pytest.approx(1000 / m["tpot_p90_ms"], rel=1e-3)
    assert m["output_tokens"] == passes * 100 * 101
    assert m["system_tps"] == pytest.approx(m["output_tokens"] / w["duration_s"], rel=1e-3)
    assert len(doc["super_passes"]["tpot_p50"]) == 19  # 20 super-passes, 1 of them warm-up


def test_a_level_shift_is_an_anomaly_and_the_first_plateau_is_reported() -> None:
    doc = analyse_steady_state(
        timings(2000, lambda i: 5.0 if i < 1200 else 6.5), method(min_duration_s=30)
    )
    assert doc["verdict"] == "anomaly" and doc["status"] == "windowable"
    assert doc["window"]["super_pass_start"] == 1 and doc["window"]["super_pass_end"] <= 12
    anomaly = doc["anomaly"]
    # Pettitt's rank statistic places the step within a super-pass or two of request 1,200.
    assert 10 <= anomaly["change_point_sp"] <= 12
    assert anomaly["delta_pct"] == pytest.approx(30, abs=3)
    assert anomaly["pettitt_p"] < 0.05 and len(anomaly["plateaus"]) >= 2


def test_a_ramp_that_never_settles_is_drifting_up() -> None:
    doc = analyse_steady_state(timings(2000, lambda i: 5.0 * (1 + i / 2000)), method())
    assert doc["verdict"] == "drifting_up"
    assert {"tpot_p50", "tpot_p95"} <= set(doc["drifting_up"])
    # Short plateaus only: each window is too brief to be the official result.
    assert doc["status"] == "insufficient_duration"


def test_a_run_getting_faster_is_drifting_down() -> None:
    doc = analyse_steady_state(timings(2000, lambda i: 5.0 * (1 - i / 4000)), method())
    assert doc["verdict"] == "drifting_down" and "tpot_p50" in doc["drifting_down"]


def test_coverage_statuses() -> None:
    short = analyse_steady_state(timings(80), method())
    assert short["status"] == "partial_dataset" and short["verdict"] == "not found"
    assert "less than one super-pass" in short["reason"]
    few = analyse_steady_state(timings(400), method())  # 4 super-passes, 1 of them warm-up
    assert few["status"] == "insufficient_passes" and few["window"] is None
    assert "fewer than 4" in few["reason"]
    brief = analyse_steady_state(timings(2000), method(min_duration_s=3600))
    assert brief["status"] == "insufficient_duration" and brief["window"] is not None


def test_an_error_burst_breaks_the_window() -> None:
    doc = analyse_steady_state(timings(2000, fail=lambda i: 1000 <= i < 1100), method())
    w = doc["window"]
    assert w["super_pass_end"] < 10  # super-pass 10 measured nothing
    assert doc["super_passes"]["tpot_p50"][10 - 1] is None
    assert any(lo > 10 for lo, _ in doc["plateaus"])


def test_a_plateau_too_brief_for_the_minimum_is_skipped_for_the_next() -> None:
    # Issued fast, then slowly: the first plateau spans 20 s, the second several minutes.
    t = timings(2000, lambda i: 5.0 if i < 1000 else 6.5, gap_ms=lambda i: 20 if i < 1000 else 400)
    doc = analyse_steady_state(t, method(min_duration_s=120))
    assert doc["skipped_short"] == 1 and doc["window"]["super_pass_start"] >= 10
    assert doc["status"] == "windowable"
    assert doc["anomaly"] is None  # the baseline moved to the reported plateau


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
    minimum=st.floats(0, 100),
    seed=st.integers(0, 1000),
)
def test_the_document_is_always_consistent(
    n: int, size: int, step: float, at: int, slope: float, failing: float, minimum: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    fails = rng.random(max(n, 1)) < failing
    t = timings(
        n,
        lambda i: 5.0 * (step if i >= at else 1.0) * (1 + slope * i / max(n, 1)),
        seed=seed,
        fail=lambda i: fails[i],
    )
    doc = analyse_steady_state(t, Method(super_pass_size=size, min_duration_s=minimum))
    assert doc["status"] in STATUSES and doc["verdict"] in VERDICTS
    assert doc["n_super_passes"] == n // size
    w = doc["window"]
    assert (w is None) == (doc["verdict"] == "not found")
    if w is None:
        assert doc["status"] in ("partial_dataset", "insufficient_passes") and doc["reason"]
        return
    assert 1 <= w["super_pass_start"] <= w["super_pass_end"] < doc["n_super_passes"]
    passes = w["super_pass_end"] - w["super_pass_start"] + 1
    assert passes >= 4 and w["n_samples"] + w["n_failed"] == passes * size
    assert (doc["status"] == "windowable") == (w["duration_s"] >= minimum)
    assert all(doc["state"][g] == "Plateau" for g in GATED)  # the window is a plateau
    assert [w["super_pass_start"], w["super_pass_end"]] in doc["plateaus"]
