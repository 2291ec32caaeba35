"""A curve's points packed as numbers read back as the snapshot they were packed from."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.regions import Offline
from app.publishing.domain.point_table import (
    FORMAT,
    PackedCurve,
    joined_rows,
    pack,
    packed_or_packing,
    unpack,
)
from app.publishing.domain.snapshot import (
    CurveSnapshot,
    EngagedPart,
    FrozenRecount,
    InvalidatedPoint,
    PublishedPoint,
    ReportingBasisView,
    read_stored_snapshot,
)
from app.results.domain.sla import PointTable

figure = st.floats(min_value=0.001, max_value=1e6, allow_nan=False).map(lambda v: round(v, 3))
maybe = st.none() | figure

points = st.builds(
    PublishedPoint,
    dir=st.text("r0123456789_x", min_size=1, max_size=6),
    concurrency=st.integers(1, 4096),
    offline=st.sampled_from(list(Offline)),
    system_tps=figure,
    region=st.none() | st.sampled_from(["low_latency", "med_concurrency", "margin", "r é"]),
    tps_per_user=maybe,
    ttft_p90_ms=maybe,
    e2e_avg_interactivity=maybe,
    system_tps_per_kw=maybe,
    recount=st.none()
    | st.builds(
        FrozenRecount,
        request_log=st.integers(1, 10**9),
        window=st.sampled_from(["steady_state", "total"]),
        duration_ms=maybe,
        output_tokens=st.none() | st.integers(0, 10**9),
    ),
    engaged=st.none()
    | st.builds(
        EngagedPart,
        share=st.floats(0.01, 1.0),
        accelerators=st.none() | st.integers(0, 64),
        power_kw=maybe,
    ),
    reporting_basis=st.none()
    | st.builds(
        ReportingBasisView,
        status=st.none() | st.sampled_from(["windowable", "too_short"]),
        verdict=st.none() | st.sampled_from(["STEADY STATE", "anomaly", "drifting_up"]),
    ),
)


def snapshot(points: list[PublishedPoint], agentic: bool, invalidated: int) -> CurveSnapshot:
    return CurveSnapshot(
        system="Sys", system_dir="Sys/é x", benchmark_model="m", dataset=None,
        is_agentic=agentic, x_metric="tps_per_user", c_max=None, c_min=None, regions=None,
        points=points, step_line=[], frontier=[], offline_ceiling=None, elected_offline=None,
        invalidated_points=[
            InvalidatedPoint(dir=f"r{n}", concurrency=n, reason=None) for n in range(invalidated)
        ],
    )  # fmt: skip


def same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype == np.float64:
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(a.tolist() == b.tolist())


@settings(max_examples=60, deadline=None)
@given(
    curves=st.lists(
        st.tuples(st.lists(points, max_size=8), st.booleans(), st.integers(0, 2)), max_size=5
    ),
    accelerators=st.none() | st.integers(0, 16),
)
def test_a_table_of_packed_curves_is_the_table_of_their_snapshots(
    curves: list[tuple[list[PublishedPoint], bool, int]], accelerators: int | None
) -> None:
    snapshots = [
        # Read back as the record is read: the derived figures set as every reader sees them.
        read_stored_snapshot(2, snapshot(ps, agentic, invalidated).model_dump_json())
        for ps, agentic, invalidated in curves
    ]
    packed = [unpack(pack(s)) for s in snapshots]
    assert all(p is not None for p in packed)
    read: list[PackedCurve] = [p for p in packed if p is not None]
    agentic = [s.is_agentic for s in snapshots]
    counts = [accelerators] * len(snapshots)
    models = ["X"] * len(snapshots)
    expected = PointTable.of([s.points for s in snapshots], agentic, counts, models)
    got = PointTable.of_packed(read, joined_rows(read), agentic, counts, models)
    for column in expected.__dataclass_fields__:
        assert same(getattr(got, column), getattr(expected, column)), column
    for s, p in zip(snapshots, read, strict=True):
        assert p.system_dir == s.system_dir
        assert p.invalidated == len(s.invalidated_points)
        assert [p.recount(n) for n in range(len(p))] == [q.recount for q in s.points]


def test_a_packing_of_another_format_or_none_is_made_again_from_the_snapshot() -> None:
    s = snapshot([PublishedPoint(dir="r1", concurrency=1, system_tps=10.0)], False, 0)
    packed = pack(s)
    assert unpack(None) is None
    assert unpack(packed[:5]) is None
    assert unpack(packed[:2] + bytes([FORMAT + 1]) + packed[3:]) is None
    assert unpack(b"XX" + packed[2:]) is None
    asked: list[bool] = []

    def from_snapshot() -> CurveSnapshot:
        asked.append(True)
        return s

    # The snapshot is read only where the packing cannot be.
    assert len(packed_or_packing(packed, from_snapshot)) == 1 and not asked
    again = packed_or_packing(b"XX" + packed[2:], from_snapshot)
    assert asked and again.row_bytes == unpack(packed).row_bytes  # type: ignore[union-attr]
