"""What the run services ask of a stored point."""

from __future__ import annotations

from submission_checker.models.regions import min_duration_ms

from app.db.models import Point


def min_duration_s(point: Point) -> float | None:
    """§6.2's minimum (steady-state) duration for the point, from the official checker's
    table; None when the point has no region (a dedicated Offline point)."""
    if not point.region:
        return None
    ms = min_duration_ms(point.region, int(point.concurrency), agentic=point.curve.is_agentic)
    return ms / 1000
