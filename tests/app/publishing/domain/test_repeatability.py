"""A point's runs (the submitted one and its reproductions) as one sample."""

from __future__ import annotations

import pytest

from app.publishing.domain.repeatability import Spread, repeatability, t95


def test_three_runs_give_the_t_interval_and_the_coefficient_of_variation() -> None:
    spread = Spread.of([100.0, 110.0, 90.0])  # mean 100, sample sd 10
    half = 4.303 * 10 / 3**0.5
    assert (spread.min, spread.max, spread.mean) == (90.0, 110.0, 100.0)
    assert spread.ci95 == pytest.approx([100 - half, 100 + half], abs=1e-3)
    assert spread.cv == pytest.approx(0.1)


def test_two_runs_give_the_range_only() -> None:
    spread = Spread.of([100.0, 104.0])
    assert (spread.min, spread.max, spread.mean, spread.ci95, spread.cv) == (
        100.0, 104.0, 102.0, None, None,
    )  # fmt: skip


def test_the_t_values_and_the_normal_past_thirty() -> None:
    assert t95(1) == 12.706 and t95(4) == 2.776 and t95(30) == 2.042 and t95(31) == 1.96
    with pytest.raises(ValueError):
        t95(0)


def test_the_submitted_run_comes_first_and_an_unreproduced_point_has_none() -> None:
    assert repeatability((1000.0, 50.0), []) is None
    found = repeatability((1000.0, 50.0), [("a", 960.0, 48.0), ("b", 1020.0, None)])
    assert found is not None and found.runs == 3 and found.reproductions == ["a", "b"]
    assert (found.system_tps.min, found.system_tps.max) == (960.0, 1020.0)
    assert found.per_user is None  # one run did not measure it: no spread of it
