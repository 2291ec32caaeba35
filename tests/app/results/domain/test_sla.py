"""Admissibility and the best point under an SLA."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.regions import Offline
from app.publishing.domain.snapshot import EngagedPart, PublishedPoint
from app.results.domain.sla import (
    PointTable,
    Price,
    Sla,
    admissible_rows,
    best_rows,
    throughput_rows,
    usd_per_million_tokens_rows,
)


# The rules read columns; these ask them about one point (a table of one row) or one
# curve, as the cases below are written.
def one(
    point: PublishedPoint, agentic: bool = False, accelerators: int | None = None
) -> PointTable:
    return PointTable.of([[point]], [agentic], [accelerators])


def value(x: float) -> float | None:
    return None if math.isnan(x) else x


def admissible(point: PublishedPoint, sla: Sla, agentic: bool = False) -> bool:
    return bool(admissible_rows(one(point, agentic), sla)[0])


def throughput(
    point: PublishedPoint, normalize: str, accelerators: int | None, price: Price | None = None
) -> float | None:
    return value(throughput_rows(one(point, False, accelerators), normalize, price)[0])


def usd_per_million_tokens(
    point: PublishedPoint, price: Price | None, accelerators: int | None
) -> float | None:
    return value(usd_per_million_tokens_rows(one(point, False, accelerators), price)[0])


def best_point(
    points: list[PublishedPoint],
    sla: Sla,
    *,
    agentic: bool = False,
    normalize: str = "system",
    accelerators: int | None = None,
    price: Price | None = None,
) -> PublishedPoint | None:
    table = PointTable.of([points], [agentic], [accelerators])
    ok = admissible_rows(table, sla)
    row = best_rows(table, ok, throughput_rows(table, normalize, price), 1)[0]
    return None if row < 0 else points[row]


def p(
    c: int,
    tps: float,
    tpu: float | None,
    ttft: float | None,
    region: str | None = "med_concurrency",
    offline: str = "none",
    per_kw: float | None = None,
    inter: float | None = None,
) -> PublishedPoint:
    return PublishedPoint(
        dir=f"r{c}",
        concurrency=c,
        system_tps=tps,
        tps_per_user=tpu,
        ttft_p90_ms=ttft,
        region=region,
        offline=Offline(offline),
        system_tps_per_kw=per_kw,
        e2e_avg_interactivity=inter,
    )


def dir_of(point: PublishedPoint | None) -> str | None:
    return None if point is None else point.dir


CURVE = [
    p(1, 180, 190, 40, "low_latency"),
    p(16, 2500, 160, 60),
    p(64, 7000, 110, 110),
    p(512, 15000, 30, 590, "high_concurrency"),
    p(13368, 17000, 8, 2200, None, "dedicated"),
]


def test_every_limit_is_applied() -> None:
    assert [x.dir for x in CURVE if admissible(x, Sla(ttft_p90_max_ms=100))] == ["r1", "r16"]
    assert [x.dir for x in CURVE if admissible(x, Sla(tps_per_user_min=100))] == [
        "r1",
        "r16",
        "r64",
    ]
    assert [x.dir for x in CURVE if admissible(x, Sla(concurrency_min=64))] == ["r64", "r512"]
    assert [x.dir for x in CURVE if admissible(x, Sla(regions=("high_concurrency",)))] == ["r512"]
    assert [x.dir for x in CURVE if admissible(x, Sla())] == ["r1", "r16", "r64", "r512"]


def test_limits_are_inclusive_and_missing_values_fail() -> None:
    assert admissible(p(8, 1, 100, 50), Sla(ttft_p90_max_ms=50, tps_per_user_min=100))
    assert not admissible(p(8, 1, None, 50), Sla(tps_per_user_min=1))
    assert not admissible(p(8, 1, 100, None), Sla(ttft_p90_max_ms=1000))


def test_best_point_is_the_highest_throughput_that_qualifies() -> None:
    assert dir_of(best_point(CURVE, Sla(tps_per_user_min=100))) == "r64"
    assert dir_of(best_point(CURVE, Sla())) == "r512"  # the dedicated Offline run never counts
    assert best_point(CURVE, Sla(ttft_p90_max_ms=10)) is None


def test_ties_prefer_the_faster_user_then_the_lower_concurrency() -> None:
    tied = [p(8, 1000, 100, 50), p(16, 1000, 120, 50), p(32, 1000, 120, 50)]
    assert dir_of(best_point(tied, Sla())) == "r16"


def test_equal_x_and_single_and_offline_only_curves() -> None:
    same_x = [p(8, 900, 100, 50), p(16, 1000, 100, 50)]
    assert dir_of(best_point(same_x, Sla(tps_per_user_min=100))) == "r16"
    assert dir_of(best_point([p(4, 10, 10, 10)], Sla())) == "r4"
    assert best_point([p(9000, 5, 1, 1, None, "dedicated")], Sla()) is None


def test_normalised_throughput_and_agentic_axis() -> None:
    point = p(8, 1000, 100, 50, per_kw=99.0)
    assert throughput(point, "kw", 8) == 99.0
    assert throughput(point, "accelerator", 8) == 125.0
    assert throughput(point, "accelerator", None) is None
    agentic = [p(4, 100, None, 10, inter=40), p(8, 180, None, 12, inter=30)]
    assert dir_of(best_point(agentic, Sla(tps_per_user_min=35), agentic=True)) == "r4"
    assert best_point([p(8, 1, 1, 1, per_kw=None)], Sla(), normalize="kw") is None


def test_cost_per_million_tokens_at_the_buyers_price() -> None:
    point = p(64, 7200, 110, 110)
    per_gpu = Price(per_accelerator_hour=3.0)
    # 8 accelerators at $3/h make $24/h; 7200 tok/s make 25.92 M tokens an hour.
    assert usd_per_million_tokens(point, per_gpu, 8) == pytest.approx(24 / 25.92)
    assert usd_per_million_tokens(point, Price(per_system_hour=20.0), 8) == pytest.approx(
        20 / 25.92
    )
    assert usd_per_million_tokens(point, per_gpu, None) is None  # no count, no per-GPU price
    assert usd_per_million_tokens(point, None, 8) is None
    # The cheapest admissible point is the best one: the one with the most tokens per $.
    cheapest = best_point(CURVE, Sla(tps_per_user_min=100), normalize="usd_per_mtok",
                          accelerators=8, price=per_gpu)  # fmt: skip
    assert dir_of(cheapest) == "r64"
    assert throughput(point, "usd_per_mtok", 8, per_gpu) == pytest.approx(25.92e6 / 24)


def test_a_point_on_part_of_the_system_costs_and_counts_that_part() -> None:
    """nodes_used engaged one node of two (§4.5.3): the cost and the per-accelerator
    figure are of that node, not of the whole system."""
    half = p(64, 7200, 110, 110).model_copy(
        update={"engaged": EngagedPart(share=0.5, accelerators=8, power_kw=10.08)}
    )
    whole = p(64, 7200, 110, 110)
    per_gpu, per_system = Price(per_accelerator_hour=3.0), Price(per_system_hour=48.0)
    # The system has 16 accelerators; the half ran on 8.
    assert usd_per_million_tokens(whole, per_gpu, 16) == pytest.approx(48 / 25.92)
    assert usd_per_million_tokens(half, per_gpu, 16) == pytest.approx(24 / 25.92)
    assert usd_per_million_tokens(whole, per_system, 16) == pytest.approx(48 / 25.92)
    assert usd_per_million_tokens(half, per_system, 16) == pytest.approx(24 / 25.92)
    assert throughput(whole, "accelerator", 16) == 450.0
    assert throughput(half, "accelerator", 16) == 900.0
    # Engaged nodes whose accelerators are not known: the share still prices the part at
    # a system-hour price; at a per-accelerator price the system's count stands.
    unknown = whole.model_copy(
        update={"engaged": EngagedPart(share=0.5, accelerators=None, power_kw=None)}
    )
    assert usd_per_million_tokens(unknown, per_system, 16) == pytest.approx(24 / 25.92)
    assert usd_per_million_tokens(unknown, per_gpu, 16) == pytest.approx(48 / 25.92)
    # A count of none is not known either; nor is a system of no accelerators.
    none = whole.model_copy(update={"engaged": EngagedPart(share=0.5, accelerators=0,
                                                           power_kw=None)})  # fmt: skip
    assert usd_per_million_tokens(none, per_gpu, 16) == pytest.approx(48 / 25.92)
    assert throughput(whole, "accelerator", 0) is None
    assert Price(per_system_hour=48.0).hourly(None, 0.25) == 12.0


# A point as the table sees it: its figure under the query (NaN: none), its speed per
# user (None: not measured) and whether the SLA admits it. Few values, so ties are common.
_ROW = st.tuples(
    st.sampled_from([1.0, 2.0, 3.0, math.nan]), st.sampled_from([10.0, 20.0, None]), st.booleans()
)


@given(st.lists(st.lists(_ROW, max_size=5), min_size=1, max_size=8))
def test_each_curves_best_row_is_its_highest_then_fastest_then_lowest_concurrency(
    curves: list[list[tuple[float, float | None, bool]]],
) -> None:
    """Over many curves at once (one pass over the whole table) each curve's best row is
    the one a curve alone would pick: ties broken only among the tied curve's rows."""
    points = [
        [p(c + 1, 100.0, tpu, 50.0) for c, (_, tpu, _) in enumerate(curve)] for curve in curves
    ]
    table = PointTable.of(points, [False] * len(curves), [None] * len(curves))
    rows = [row for curve in curves for row in curve]
    value = np.array([y for y, _, _ in rows])
    ok = np.array([admitted for _, _, admitted in rows], dtype=np.bool_)
    expected, first = [], 0
    for curve in curves:
        scored = [
            (y, tpu or 0.0, -(c + 1), first + c)
            for c, (y, tpu, admitted) in enumerate(curve)
            if admitted and not math.isnan(y)
        ]
        expected.append(max(scored)[3] if scored else -1)
        first += len(curve)
    assert best_rows(table, ok, value, len(curves)).tolist() == expected
