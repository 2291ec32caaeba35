"""A curve's official step line and its Offline runs, as the record writes them."""

from __future__ import annotations

from app.core.pareto import StepCurve, step_curve
from app.core.per_user import per_user, per_user_metric
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
    return per_user_metric(curve.is_agentic)


def step_line_of(curve: Curve) -> StepCurve:
    """The official step line of a curve's active, plotted points (dedicated Offline runs
    have no per-user rate and are a ceiling, not a point of the line)."""
    plotted = [
        p for p in curve.points if p.state == "active" and p.offline_kind != Offline.DEDICATED
    ]
    rates = [(per_user(p, curve.is_agentic), p.system_tps) for p in plotted]
    return step_curve([(x, y) for x, y in rates if x is not None])
