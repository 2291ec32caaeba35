"""The capacity planner's arithmetic: the point that holds the most users at the SLA,
and what a load needs of it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.results.domain.sizing import holding_point, requests_per_s, size
from app.results.domain.sla import Price


@dataclass(frozen=True)
class P:
    concurrency: int
    system_tps: float
    admissible: bool
    offline: str = "none"


def test_the_highest_admissible_concurrency_holds_the_load() -> None:
    points = [P(1, 100, True), P(64, 5_000, True), P(256, 9_000, False), P(16, 2_000, True)]
    assert holding_point(points) == 1
    # A dedicated Offline run holds no users, however fast.
    assert holding_point([P(1, 10, True), P(10_000, 90_000, True, "dedicated")]) == 0
    assert holding_point([P(1, 10, False)]) is None
    assert holding_point([P(8, 10, True), P(8, 12, True)]) == 1  # tie: the faster


def test_a_load_needs_whole_systems_and_everything_they_bring() -> None:
    sizing = size(2_000, 64, accelerators=8, provisioned_kw=10.2, price=Price(2.5))
    assert sizing.systems == 32  # ⌈2000 / 64⌉ = 31.25 → 32
    assert sizing.accelerators == 256
    assert sizing.provisioned_kw == pytest.approx(326.4)
    assert sizing.usd_per_hour == pytest.approx(640.0)  # 256 accelerators × $2.50
    per_system = size(100, 100, accelerators=None, provisioned_kw=None, price=Price(None, 30))
    assert (per_system.systems, per_system.accelerators, per_system.usd_per_hour) == (1, None, 30)
    unpriced = size(1, 1, accelerators=4, provisioned_kw=None, price=None)
    assert unpriced.usd_per_hour is None and unpriced.provisioned_kw is None
    with pytest.raises(ValueError):
        size(0, 8, 1, None, None)


@given(users=st.integers(1, 10**7), concurrency=st.integers(1, 10**5))
def test_the_systems_hold_the_load_and_one_fewer_would_not(users: int, concurrency: int) -> None:
    systems = size(users, concurrency, 1, None, None).systems
    assert systems * concurrency >= users > (systems - 1) * concurrency


def test_a_request_rate_is_sized_on_the_fastest_admissible_point() -> None:
    points = [P(64, 5_000, True), P(128, 7_000, True), P(96, 7_500, True), P(512, 9_000, False)]
    assert holding_point(points, by_rate=True) == 2  # the most tokens/s, not the most users
    assert holding_point(points) == 1
    # 7,500 tok/s at 500 output tokens a request answers 15 requests/s: 100 need 7.
    per_system = requests_per_s(7_500, 500)
    assert per_system == 15
    assert size(100, per_system, accelerators=8, provisioned_kw=None, price=None).systems == 7
    assert size(1000, 1000 / 16, 1, None, None).systems == 16  # no system for float noise
