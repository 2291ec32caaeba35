"""The home page's view: the latest cohort per benchmark, as small step-curve previews."""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.results.services.public import (
    latest_cohort,
    list_cohorts,
)
from app.results.services.query import ResultsQuery
from app.results.services.results import ResultCurve, list_benchmarks, query_results


class PreviewCurve(BaseModel):
    system: str
    organization: str
    status: str
    # The step line in the preview's own box: x and y from 0 to 1 (y up).
    line: list[list[float]]


class BenchmarkPreview(BaseModel):
    benchmark: str
    dataset: str | None
    agentic: bool
    cohort: str | None = Field(description="null: the current results, before any cohort")
    curves: list[PreviewCurve]
    best_system: str | None = Field(description="the highest throughput at any latency")
    link: str = Field(description="the explorer, on this benchmark and cohort")


class Home(BaseModel):
    cohort: str | None = Field(description="the latest released cohort")
    cohort_date: str | None
    previews: list[BenchmarkPreview]


def _normalised(curves: list[ResultCurve]) -> list[PreviewCurve]:
    xs = [x for c in curves for x, _y in c.step_line]
    ys = [y for c in curves for _x, y in c.step_line]
    if not xs:
        return []
    x_max, y_max = max(xs) or 1.0, max(ys) or 1.0
    return [
        PreviewCurve(
            system=c.system,
            organization=c.organization,
            status=c.status,
            line=[[round(x / x_max, 4), round(y / y_max, 4)] for x, y in c.step_line],
        )
        for c in curves
        if c.step_line
    ]


def home(session: Session) -> Home:
    """Every benchmark of the latest cohort, each drawn small from the same computation
    the explorer uses (its default view of that cohort)."""
    cohort = latest_cohort(session)  # None: an embargo released results before any cohort
    previews = []
    # The fullest charts first; agentic benchmarks after the single-turn ones.
    ranked = sorted(list_benchmarks(session, cohort), key=lambda b: (b.agentic, -b.curves, b.id))
    for benchmark in ranked:
        view = query_results(session, ResultsQuery(benchmark=benchmark.id, cohort=cohort))
        previews.append(
            BenchmarkPreview(
                benchmark=benchmark.id,
                dataset=view.dataset,
                agentic=benchmark.agentic,
                cohort=cohort,
                curves=_normalised(view.curves),
                best_system=view.ranking[0].system if view.ranking else None,
                link=f"/results?benchmark={benchmark.id}" + (f"&cohort={cohort}" if cohort else ""),
            )
        )
    date = next((c.date for c in list_cohorts(session) if c.id == cohort), None) if cohort else None
    return Home(cohort=cohort, cohort_date=date.isoformat() if date else None, previews=previews)
