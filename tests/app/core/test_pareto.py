"""The step curve of architecture §8 (bundle-format §7.3): no interpolation, for every
pair of axis directions."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.pareto import LEAD_IN_FRACTION, frontier, step_curve, step_value


def _line_value(line: list[tuple[float, float]], x: float) -> float | None:
    """Read the drawn line at x (right-continuous at each drop, like the definition)."""
    value = None
    for (x0, y0), (x1, _y1) in zip(line, line[1:], strict=False):
        if x0 < x <= x1 or (x0 == x1 == x):
            value = y0 if x0 != x1 else None
            if value is not None:
                return value
    return value


def test_dominated_points_are_not_vertices() -> None:
    points = [(10.0, 100.0), (20.0, 80.0), (15.0, 70.0), (30.0, 40.0)]
    assert frontier(points) == [(10.0, 100.0), (20.0, 80.0), (30.0, 40.0)]


def test_value_is_best_throughput_at_that_interactivity_or_better() -> None:
    points = [(10.0, 100.0), (20.0, 80.0), (15.0, 70.0), (30.0, 40.0)]
    assert step_value(points, 5) == 100
    assert step_value(points, 10) == 100
    assert step_value(points, 10.1) == 80
    assert step_value(points, 20) == 80
    assert step_value(points, 25) == 40
    assert step_value(points, 31) is None


def test_line_drops_at_the_lower_x_point() -> None:
    curve = step_curve([(10.0, 100.0), (20.0, 80.0), (30.0, 40.0)])
    assert curve.line == [
        (10.0 * (1 - LEAD_IN_FRACTION), 100.0),
        (10.0, 100.0),
        (10.0, 80.0),
        (20.0, 80.0),
        (20.0, 40.0),
        (30.0, 40.0),
    ]


def test_line_agrees_with_the_definition_everywhere() -> None:
    rng = random.Random(7)
    for _ in range(50):
        points = [(rng.uniform(1, 200), rng.uniform(1, 20000)) for _ in range(rng.randint(1, 12))]
        curve = step_curve(points)
        ys = [y for _, y in curve.line]
        assert ys == sorted(ys, reverse=True), "the step line never rises"
        lo, hi = curve.frontier[0][0], curve.frontier[-1][0]
        for _ in range(30):
            x = rng.uniform(lo, hi)
            assert _line_value(curve.line, x) == step_value(points, x)


def test_empty_and_single_point() -> None:
    assert step_curve([]).line == []
    single = step_curve([(5.0, 50.0)])
    assert single.frontier == [(5.0, 50.0)]
    assert single.line[-1] == (5.0, 50.0)


def _horizontal_value(line: list[tuple[float, float]], x: float) -> float | None:
    """The drawn line's height at *x*, read from its horizontal segment over *x*."""
    for (x0, y0), (x1, y1) in zip(line, line[1:], strict=False):
        if y0 == y1 and min(x0, x1) < x < max(x0, x1):
            return y0
    return None


DIRECTIONS = [(True, True), (False, True), (True, False), (False, False)]
coordinates = st.lists(
    st.tuples(st.integers(1, 30).map(float), st.integers(1, 30).map(float)),
    min_size=1,
    max_size=12,
)


@pytest.mark.parametrize(("x_higher", "y_higher"), DIRECTIONS)
@settings(max_examples=150, deadline=None, derandomize=True)
@given(points=coordinates)
def test_the_step_curve_for_every_pair_of_directions(
    x_higher: bool, y_higher: bool, points: list[tuple[float, float]]
) -> None:
    sx, sy = (1 if x_higher else -1), (1 if y_higher else -1)
    curve = step_curve(points, x_higher, y_higher)
    front = curve.frontier
    assert front == sorted(front) and set(front) <= set(points)
    for fx, fy in front:  # no point beats a vertex: as good an x and a strictly better y
        assert not any(sx * px >= sx * fx and sy * py > sy * fy for px, py in points)
    for px, py in points:  # every other point is matched or beaten by a vertex
        assert any(sx * fx >= sx * px and sy * fy >= sy * py for fx, fy in front)
    ys = [y for _, y in front]  # along ascending x, y gets worse as x gets better
    assert ys == sorted(ys, reverse=x_higher == y_higher)
    xs = sorted({x for x, _ in front})
    for left, right in zip(xs, xs[1:], strict=False):
        between = (left + right) / 2
        assert _horizontal_value(curve.line, between) == step_value(
            points, between, x_higher, y_higher
        )
    # The lead-in sits on the better side's far end: before the first vertex, or after the
    # last one when lower x is better.
    if x_higher:
        assert curve.line[0] == (front[0][0] * (1 - LEAD_IN_FRACTION), front[0][1])
    else:
        assert curve.line[-1] == (front[-1][0] * (1 + LEAD_IN_FRACTION), front[-1][1])


def test_a_lower_is_better_x_steps_the_other_way() -> None:
    """TTFT on x: at any TTFT the line shows the best throughput at that TTFT or lower,
    rising at each higher-TTFT vertex (bundle-format §7.3, rule 4)."""
    curve = step_curve([(100.0, 40.0), (300.0, 80.0), (200.0, 30.0), (500.0, 100.0)], False)
    assert curve.frontier == [(100.0, 40.0), (300.0, 80.0), (500.0, 100.0)]
    assert curve.line == [
        (100.0, 40.0),
        (300.0, 40.0),
        (300.0, 80.0),
        (500.0, 80.0),
        (500.0, 100.0),
        (500.0 * (1 + LEAD_IN_FRACTION), 100.0),
    ]
