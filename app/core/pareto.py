"""The official step curve (architecture, decision 8).

At any x the curve's value is the highest y among the points whose x is at least x: a
non-increasing step function with no interpolation. Points that no other point beats on
both axes are its vertices; the rest are drawn as markers only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# The official visualiser starts the line a little left of the first vertex.
LEAD_IN_FRACTION = 0.06


@dataclass(frozen=True)
class StepCurve:
    frontier: list[tuple[float, float]]  # ascending x, descending y
    line: list[tuple[float, float]]  # vertices of the drawn step line


def frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points with a strictly higher y than every point of higher (or equal) x."""
    best: list[tuple[float, float]] = []
    for x, y in sorted(points, key=lambda p: (-p[0], -p[1])):
        if not best or y > best[-1][1]:
            best.append((x, y))
    return sorted(best)


def step_value(points: Sequence[tuple[float, float]], x: float) -> float | None:
    """The curve at *x*: max y over points with x_i ≥ x, or None past the last point."""
    candidates = [py for px, py in points if px >= x]
    return max(candidates) if candidates else None


def step_curve(points: Sequence[tuple[float, float]]) -> StepCurve:
    front = frontier(points)
    if not front:
        return StepCurve([], [])
    first_x, first_y = front[0]
    line = [(first_x * (1 - LEAD_IN_FRACTION), first_y), (first_x, first_y)]
    for (prev_x, _), (x, y) in zip(front, front[1:], strict=False):
        line.append((prev_x, y))  # the drop happens at the lower-x point
        line.append((x, y))
    return StepCurve(front, line)
