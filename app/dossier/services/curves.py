"""A submission's curves as its page and the API show them: every point with its review
state, the official step line (architecture §8) and the reproductions beside it."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from app.core.regions import region_basis, region_name
from app.db.models import Curve, Point, Reproduction
from app.publishing.domain.snapshot import CurveSnapshot, PublishedPoint
from app.publishing.services.publishing import curve_snapshot, published_point
from app.runs.services.views import ReproductionView, reproduction_view


class PointView(PublishedPoint):
    """An operating point of a submitted curve: the point as it would be published, with
    what its review knows of it besides."""

    region_name: str | None = Field(description="the region's name, for people")
    declared_region: str | None = Field(description="the region the bundle declared")
    n_samples_completed: int
    duration_ms: float
    target_cohort: str | None
    state: str = Field(description="active, withdrawn, disputed or invalidated (rules §11.1)")
    state_reason: str | None


def point_view(point: Point, agentic: bool) -> PointView:
    return PointView.model_validate(
        {
            **dict(published_point(point, agentic=agentic)),
            "region_name": region_name(point.region),
            "declared_region": point.declared_region,
            "n_samples_completed": point.n_samples_completed,
            "duration_ms": point.duration_ms,
            "target_cohort": point.target_cohort,
            "state": point.state,
            "state_reason": point.state_reason,
        }
    )


class CurveView(CurveSnapshot):
    """A submitted curve as its publication would keep it, with every point and its
    review state, how its regions were derived, and the reproduction runs of its points
    (drawn as unverified results beside them)."""

    region_basis: list[str] | None = Field(description="how the regions were derived, in words")
    points: Sequence[PointView] = Field(
        description="every point, withdrawn, disputed and invalidated ones too (the public "
        "sees the active ones)"
    )
    reproductions: list[ReproductionView]


def curve_view(
    curve: Curve, reproductions: list[Reproduction] | None = None, active_only: bool = False
) -> CurveView:
    """Withdrawn, disputed and invalidated points (rules §11.1) never shape the step line;
    *active_only* leaves them out altogether, as the public sees the curve."""
    prefix = f"{curve.system.dir_name}/{curve.benchmark_model}/"
    shown = [p for p in curve.points if p.state == "active" or not active_only]
    return CurveView.model_validate(
        {
            **dict(curve_snapshot(curve)),
            "region_basis": _region_basis(curve),
            "points": [point_view(p, curve.is_agentic) for p in shown],
            "reproductions": [
                reproduction_view(r, private=False)
                for r in reproductions or []
                if r.point_label.startswith(prefix)
            ],
        }
    )


def _region_basis(curve: Curve) -> list[str] | None:
    fixed = [p.concurrency for p in curve.points if p.offline_kind != "dedicated"]
    if curve.c_min is None or curve.c_max is None:
        return None
    basis = region_basis(curve.c_min, curve.c_max, min(fixed) if fixed else None)
    return basis.lines() if basis else None
