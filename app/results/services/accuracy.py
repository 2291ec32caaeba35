"""Accuracy at speed: each published point's accuracy, as the gate compared it, against
its throughput, for one benchmark across systems.

It reads the explorer's own view (``query_results``: the public record, the same
filters, cohort and SLA), so a point listed here is one the explorer shows; the values
are the ones the checks stored from the bundle (``app.core.accuracy``), never computed
again here.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.core.accuracy import DatasetScores, GatedMetric
from app.results.services.public import QueryProblem
from app.results.services.query import ResultsParams, parse_results_query
from app.results.services.results import BenchmarkView, ResultCurve, ResultPoint, query_results

METHOD = (
    "Each point's metric as the official accuracy gate compares it: the sample-weighted "
    "mean over the entries of its accuracy file (the performance run's inline score "
    "included), on the threshold's scale, against the model's threshold (bundle-format "
    "§6.2). Only points that carry an accuracy run are listed; the others carry the "
    "accuracy of the curve's mandatory points (rules §4.3)."
)


class AccuracyRow(BaseModel):
    submission: str
    result_id: str | None
    system: str
    organization: str
    status: str
    peer_review_pending: bool
    colour: str = Field(description="the system's colour on every chart")
    point: str = Field(description="the point's folder")
    concurrency: int
    system_tps: float
    per_user: float | None = Field(description="tps_per_user, or e2e interactivity (agentic)")
    offline: str = Field(description="none, dedicated or elected (rules §5.7)")
    admissible: bool = Field(description="meets the query's SLA")
    accuracy: str | None = Field(description="the official gate's verdict: passed or failed")
    value: float | None = Field(description="the chosen metric as the gate compared it")
    meets: bool | None = Field(description="the chosen metric within its threshold")
    gate: list[GatedMetric] = Field(description="every thresholded metric of the point")
    datasets: list[DatasetScores] = Field(description="each entry of its accuracy file")
    cut_short: str | None = None
    link: str


class Threshold(BaseModel):
    metric: str
    lower: float
    upper: float | None


class AccuracyView(BaseModel):
    """A benchmark's points with accuracy, for one metric."""

    benchmark: str | None
    dataset: str | None
    benchmarks: list[BenchmarkView]
    cohort: str | None
    current: bool
    metric: str | None = Field(description="the metric charted (metric=; the first by default)")
    metrics: list[str] = Field(description="the thresholded metrics the points report")
    threshold: Threshold | None = Field(description="the chosen metric's bounds")
    sla_set: bool = Field(description="an SLA was given: admissible says which points meet it")
    method: str
    rows: list[AccuracyRow] = Field(description="by system, then concurrency")
    footnote: str | None


class AccuracyParams(ResultsParams):
    """The accuracy view's parameters: the explorer's, and the metric charted."""

    metric: str | None = Field(
        None,
        description="the thresholded metric to chart, e.g. rouge1 or exact_match; default "
        "the benchmark's first",
    )


def accuracy_view(session: Session, params: AccuracyParams) -> AccuracyView:
    """The view for URL parameters: the explorer's (benchmark, cohort, statuses, filters,
    SLA) and ``metric``."""
    query = parse_results_query(session, params, None)
    view = query_results(session, replace(query, limit=None))
    found: list[tuple[ResultCurve, ResultPoint]] = [
        (curve, point)
        for curve in view.curves
        for point in curve.points
        if point.accuracy_detail is not None
    ]
    metrics: list[str] = []
    bounds: dict[str, GatedMetric] = {}
    for _, point in found:
        assert point.accuracy_detail is not None
        for gated in point.accuracy_detail.gate:
            if gated.metric not in bounds:
                metrics.append(gated.metric)
                bounds[gated.metric] = gated
    asked = params.given("metric")
    if asked is not None and asked not in bounds:
        known = ", ".join(metrics) or "none: no point shown reports a thresholded metric"
        raise QueryProblem("metric", f"{asked!r} is not a metric of these points ({known})")
    metric = asked or (metrics[0] if metrics else None)
    rows = [_row(curve, point, metric) for curve, point in found]
    rows.sort(key=lambda r: (r.system, r.organization, r.submission, r.concurrency))
    chosen = bounds.get(metric) if metric else None
    return AccuracyView(
        benchmark=view.benchmark,
        dataset=view.dataset,
        benchmarks=view.benchmarks,
        cohort=view.cohort,
        current=view.current,
        metric=metric,
        metrics=metrics,
        threshold=(
            Threshold(metric=chosen.metric, lower=chosen.lower, upper=chosen.upper)
            if chosen
            else None
        ),
        sla_set=view.sla_set,
        method=METHOD,
        rows=rows,
        footnote=view.footnote,
    )


def _row(curve: ResultCurve, point: ResultPoint, metric: str | None) -> AccuracyRow:
    detail = point.accuracy_detail
    assert detail is not None
    gated = detail.gated(metric) if metric else None
    return AccuracyRow(
        submission=curve.submission,
        result_id=curve.result_id,
        system=curve.system,
        organization=curve.organization,
        status=curve.status,
        peer_review_pending=curve.peer_review_pending,
        colour=curve.colour,
        point=point.dir,
        concurrency=point.concurrency,
        system_tps=point.system_tps,
        per_user=point.per_user,
        offline=point.offline.value,
        admissible=point.admissible,
        accuracy=point.accuracy,
        value=gated.value if gated else None,
        meets=gated.meets if gated else None,
        gate=detail.gate,
        datasets=detail.datasets,
        cut_short=point.cut_short,
        link=f"/submissions/{curve.submission}",
    )
