"""A curve's official step line and its Offline runs, as the record writes them."""

from __future__ import annotations

from app.core.pareto import StepCurve, step_curve
from app.core.regions import Offline
from app.db.models import Curve, Point
from app.publishing.domain.snapshot import OfflineCeiling


def offline_of(active: list[Point]) -> tuple[OfflineCeiling | None, str | None]:
    """A curve's Offline runs: the dedicated one's ceiling, and the elected point's folder."""
    dedicated = next((p for p in active if p.offline_kind == Offline.DEDICATED), None)
    elected = next((p for p in active if p.offline_kind == Offline.ELECTED), None)
    ceiling = (
        None
        if dedicated is None
        else OfflineCeiling(system_tps=dedicated.system_tps, concurrency=dedicated.concurrency)
    )
    return ceiling, None if elected is None else elected.dir_name


def x_metric_of(curve: Curve) -> str:
    return "e2e_avg_interactivity" if curve.is_agentic else "tps_per_user"


def step_line_of(curve: Curve) -> StepCurve:
    """The official step line of a curve's active, plotted points (dedicated Offline runs
    have no per-user rate and are a ceiling, not a point of the line)."""
    x_key = x_metric_of(curve)
    plotted = [p for p in curve.points if p.state == "active" and p.offline_kind != "dedicated"]
    return step_curve(
        [(getattr(p, x_key), p.system_tps) for p in plotted if getattr(p, x_key) is not None]
    )
