"""The official step curve (architecture, decision 8), for any pair of axis directions.

With both axes higher-is-better (tokens/s per user against system tokens/s, the default),
the curve's value at any x is the best y among the points whose x is at least as good: a
step function with no interpolation. Points that no other point beats on both axes are
its vertices; the rest are drawn as markers only. A lower-is-better axis (TTFT) turns the
comparison on that axis round, as the official visualiser does (bundle-format §7.3): the
frontier keeps a point only when its y is strictly better than every point's of a better
(or equal) x, and for a lower-is-better x the steps turn the other way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# The official visualiser starts the line a little before the first vertex (after the
# last one for a lower-is-better x).
LEAD_IN_FRACTION = 0.06


@dataclass(frozen=True)
class StepCurve:
    frontier: list[tuple[float, float]]  # ascending x
    line: list[tuple[float, float]]  # vertices of the drawn step line


def frontier(
    points: Sequence[tuple[float, float]], x_higher: bool = True, y_higher: bool = True
) -> list[tuple[float, float]]:
    """Points with a strictly better y than every point of a better (or equal) x, by
    ascending x."""
    sx, sy = (1 if x_higher else -1), (1 if y_higher else -1)
    best: list[tuple[float, float]] = []
    for x, y in sorted(points, key=lambda p: (-sx * p[0], -sy * p[1])):
        if not best or sy * y > sy * best[-1][1]:
            best.append((x, y))
    return sorted(best)


def step_value(
    points: Sequence[tuple[float, float]], x: float, x_higher: bool = True, y_higher: bool = True
) -> float | None:
    """The curve at *x*: the best y over the points whose x is at least as good, or None
    past the last point."""
    candidates = [py for px, py in points if (px >= x if x_higher else px <= x)]
    if not candidates:
        return None
    return max(candidates) if y_higher else min(candidates)


def step_curve(
    points: Sequence[tuple[float, float]], x_higher: bool = True, y_higher: bool = True
) -> StepCurve:
    front = frontier(points, x_higher, y_higher)
    if not front:
        return StepCurve([], [])
    line: list[tuple[float, float]] = [front[0]]
    for (prev_x, prev_y), (x, y) in zip(front, front[1:], strict=False):
        if x_higher:
            line += [(prev_x, y), (x, y)]  # the step happens at the lower-x point
        else:
            line += [(x, prev_y), (x, y)]  # … at the higher-x point
    if x_higher:
        first_x, first_y = front[0]
        line.insert(0, (first_x * (1 - LEAD_IN_FRACTION), first_y))
    else:
        last_x, last_y = front[-1]
        line.append((last_x * (1 + LEAD_IN_FRACTION), last_y))
    return StepCurve(front, line)
