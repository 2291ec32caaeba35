from __future__ import annotations

from app.checks.domain.findings import Severity
from app.runs.domain.reproduction import Measured, judge_reproduction

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
    assert "ran 60 s, and §6.2 asks 1,200 s" in short.message and short.fix
    full = judge_reproduction(*args, duration_s=1250, min_duration_s=1200)
    assert full.severity == Severity.INFO and full.message.startswith("Within the 10% margin")
