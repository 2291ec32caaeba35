"""The step curve of architecture §8: non-increasing, no interpolation."""

from __future__ import annotations

import random

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
