from __future__ import annotations

import random

from app.checks.domain.findings import Severity
from app.runs.domain.reproduction import (
    LatencyMethod,
    Measured,
    compare_latency,
    judge_reproduction,
)
from harness.metrics.definitions import stat_block

POINT = "sys/llama3_1-8b/r64"


def test_within_the_margin_is_informational() -> None:
    f = judge_reproduction(Measured(1000, 50), Measured(920, 47), 0.10, POINT)
    assert f.severity == Severity.INFO and f.rule == "reproduction-margin"
    assert "-8.0%" in f.message and f.point == POINT and f.clause == "§11.4"


def test_a_shortfall_past_the_margin_is_a_warning_naming_the_metric() -> None:
    f = judge_reproduction(Measured(1000, 50), Measured(880, 49), 0.10, POINT)
    assert f.severity == Severity.WARNING
    assert "system tokens/s" in f.message and "tokens/s per user" not in f.message.split(":")[0]
    assert f.fix


def test_faster_than_submitted_is_fine_and_missing_values_are_said() -> None:
    assert (
        judge_reproduction(Measured(1000, 50), Measured(2000, 80), 0.10, POINT).severity == "info"
    )
    partial = judge_reproduction(Measured(1000, 50), Measured(1000, None), 0.10, POINT)
    assert partial.severity == "info" and "not measured" in partial.message
    none = judge_reproduction(Measured(1000, 50), Measured(None, None), 0.10, POINT)
    assert none.severity == Severity.WARNING and "could not be compared" in none.message


def test_the_margin_is_configurable() -> None:
    assert (
        judge_reproduction(Measured(100, 10), Measured(94, 10), 0.05, POINT).severity == "warning"
    )
    assert judge_reproduction(Measured(100, 10), Measured(94, 10), 0.10, POINT).severity == "info"


def test_beyond_the_margin_on_the_high_side_is_said_which_way_and_by_how_much() -> None:
    f = judge_reproduction(Measured(1000, 50), Measured(1200, 51), 0.10, POINT)
    assert f.severity == Severity.INFO and "Within" not in f.message
    assert "beyond the 10% margin (system tokens/s by 20.0%)" in f.message
    short = judge_reproduction(Measured(1000, 50), Measured(850, 50), 0.10, POINT)
    assert "system tokens/s by 15.0% short" in short.message


def test_a_run_shorter_than_the_points_minimum_duration_is_not_evidence() -> None:
    args = (Measured(1000, 50), Measured(1000, 50), 0.10, POINT)
    short = judge_reproduction(*args, duration_s=60, min_duration_s=1200)
    assert short.severity == Severity.WARNING and short.message.startswith("Not evidence yet")
    assert "issue-time span is 60 s, and §6.2 asks 1,200 s" in short.message and short.fix
    # An agentic point above Ultra Low: 2,400 s before its reproduction counts.
    agentic = judge_reproduction(*args, duration_s=1500, min_duration_s=2400, agentic=True)
    assert agentic.severity == Severity.WARNING
    assert "§6.2 asks 2,400 s at this agentic point" in agentic.message
    full = judge_reproduction(*args, duration_s=1250, min_duration_s=1200)
    assert full.severity == Severity.INFO and full.message.startswith("Within the 10% margin")


def test_an_agentic_point_is_judged_on_interactivity_and_the_same_system_on_five_percent() -> None:
    f = judge_reproduction(Measured(1000, 40), Measured(990, 30), 0.10, POINT, agentic=True)
    assert f.severity == Severity.WARNING and "e2e avg interactivity by 25.0%" in f.message
    same = judge_reproduction(Measured(100, 10), Measured(94, 10), 0.05, POINT, same_system=True)
    assert same.severity == Severity.WARNING and "5% same-system margin" in same.message


def _summary(ttft_ms: list[float], tpot_ms: list[float]) -> dict:  # type: ignore[type-arg]
    """A summary's TTFT and TPOT stat blocks (ns), as the harness writes them."""
    return {
        "ttft": stat_block([v * 1e6 for v in ttft_ms]),
        "tpot": stat_block([v * 1e6 for v in tpot_ms]),
    }


def test_latency_within_the_band_is_evidence_and_says_it_is_only_that() -> None:
    rng = random.Random(0)
    ttft = [rng.lognormvariate(4, 0.3) for _ in range(2000)]
    tpot = [rng.lognormvariate(1.5, 0.1) for _ in range(2000)]
    again = [v * rng.uniform(0.99, 1.01) for v in ttft], [v * rng.uniform(0.99, 1.01) for v in tpot]
    finding, doc = compare_latency(_summary(ttft, tpot), _summary(*again), LatencyMethod(), POINT)
    assert finding.severity == Severity.INFO and finding.rule == "reproduction-latency"
    assert "may not rest on latency" in finding.message and doc["within"]
    bands = doc["metrics"]["ttft"]["bands"]
    assert [b["p"] for b in bands] == [50.0, 90.0, 99.0] and all(b["within"] for b in bands)
    assert doc["metrics"]["tpot"]["distance"] < 0.05


def test_a_slower_tail_or_another_shape_is_outside_with_the_numbers() -> None:
    rng = random.Random(1)
    ttft = [rng.lognormvariate(4, 0.3) for _ in range(2000)]
    tpot = [rng.lognormvariate(1.5, 0.1) for _ in range(2000)]
    # The same median, a tail twice as long: P99 moves, P50 does not.
    tail = sorted(ttft)
    slow_tail = tail[:1900] + [v * 2 for v in tail[1900:]]
    finding, doc = compare_latency(
        _summary(ttft, tpot), _summary(slow_tail, tpot), LatencyMethod(), POINT
    )
    assert finding.severity == Severity.WARNING and "TTFT P99 +" in finding.message
    assert [b["within"] for b in doc["metrics"]["ttft"]["bands"]] == [True, True, False]
    # Every TPOT a third slower: the histograms are far apart.
    _, doc = compare_latency(
        _summary(ttft, tpot), _summary(ttft, [v * 1.33 for v in tpot]), LatencyMethod(), POINT
    )
    assert doc["metrics"]["tpot"]["distance"] > 0.5 and not doc["within"]
    # The band and the distance are settings.
    wide = LatencyMethod(band=1.5, max_distance=0.9)
    assert compare_latency(_summary(ttft, tpot), _summary(slow_tail, tpot), wide, POINT)[1][
        "within"
    ]
    # Nothing to compare: said, not passed.
    f, _ = compare_latency(None, _summary(ttft, tpot), LatencyMethod(), POINT)
    assert f.severity == Severity.INFO and f.message.startswith("No latency to compare")
