"""What buyers see: published curves per cohort, filtered by an SLA and ranked.

The curves come from the one read path, ``app.results.services.public`` (what is public,
as of a cohort, with the decisions taken since applied); this module turns them into the
explorer's table, its SLA answers, the ranking and goodput. It reads no live row.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field, TypeAdapter, computed_field
from sqlalchemy.orm import Session

from app.core.accuracy import PointAccuracy
from app.core.caching import remember
from app.core.cohorts import Cohort
from app.core.pareto import step_curve
from app.core.per_user import per_user_metric, per_user_title
from app.core.regions import Offline, region_name
from app.core.run_summary import NewerSummaryFields
from app.core.views import AS_STORED, left_out_if_none
from app.publishing.domain.facts import FACETS
from app.publishing.domain.point_table import NO_REQUEST_LOG, PackedCurve, joined_rows
from app.publishing.domain.snapshot import (
    FrozenRecount,
    PublishedPoint,
    ReportingBasisView,
)
from app.results.domain.axes import AXES, Direction, better_corner, with_direction
from app.results.domain.colours import PALETTE, colours, system_key
from app.results.domain.presets import PricePreset
from app.results.domain.sla import (
    DERIVED,
    NOT_AN_MLPERF_FIGURE,
    PointTable,
    Price,
    Sla,
    admissible_rows,
    best_rows,
    throughput_rows,
    usd_per_million_tokens_rows,
)
from app.results.services.public import (
    PRELIMINARY_FOOTNOTE,
    STANDING_TAGS,
    STATUSES,
    QueryProblem,
    RecordKey,
    VisibleCurve,
    availability_filed_as,
    checked_cohort,
    latest_cohort,
    peer_review_pending,
    published_record,
    request_logs,
    result_names,
    standing_fields,
)
from app.results.services.query import (
    LISTED,
    ResultsQuery,
)
from app.runs.domain.goodput import GoodputIndex, RequestLog, slo_rates


@dataclass(frozen=True)
class View:
    """What a cohort shows: its curves, and all their points as one table (rows of a
    curve adjacent, in the snapshot's order) for questions over every point at once."""

    curves: list[VisibleCurve]
    packed: list[PackedCurve]  # per curve, its points as published
    table: PointTable
    first_row: npt.NDArray[np.int64]  # per curve, its first row; one more entry at the end
    request_log: npt.NDArray[np.int64]  # per row, its re-count's record (NO_REQUEST_LOG)
    by_name: npt.NDArray[np.int64]  # the curves in the order tables list them: org, system
    benchmarks: list[BenchmarkView]
    goodput_plans: dict[Any, GoodputPlan] = field(default_factory=dict)
    matching: dict[tuple[Any, ...], list[int]] = field(default_factory=dict)  # by filters

    @classmethod
    def of(cls, curves: list[VisibleCurve], packed: list[PackedCurve]) -> View:
        rows = joined_rows(packed)
        table = PointTable.of_packed(
            packed,
            rows,
            [c.is_agentic for c in curves],
            [c.accelerator_count for c in curves],
            [c.accelerator_model for c in curves],
        )
        sizes = [len(p) for p in packed]
        return cls(
            curves,
            packed,
            table,
            np.concatenate(([0], np.cumsum(sizes))).astype(np.int64),
            rows["request_log"].astype(np.int64),
            np.array(
                sorted(
                    range(len(curves)),
                    key=lambda n: (curves[n].organization.lower(), curves[n].system_name.lower()),
                ),
                dtype=np.int64,
            ),
            _benchmarks(curves),
        )

    @functools.cached_property
    def columns(self) -> CurveColumns:
        return CurveColumns.of(self.curves)

    def marked(self, curves: list[int]) -> npt.NDArray[np.bool_]:
        """Per curve of the view, whether it is one of *curves*."""
        mask = np.zeros(len(self.curves), dtype=np.bool_)
        mask[curves] = True
        return mask

    def in_name_order(self, curves: list[int]) -> npt.NDArray[np.int64]:
        """*curves* in the order tables list them (organisation, system)."""
        return self.by_name[self.marked(curves)[self.by_name]]

    def dir_of(self, row: int) -> str:
        """The folder of the point in *row*."""
        n = int(self.table.curve[row])
        return self.curves[n].snapshot.points[row - int(self.first_row[n])].dir

    def recount_of(self, row: int) -> FrozenRecount | None:
        """The re-count published with the point in *row*."""
        n = int(self.table.curve[row])
        return self.packed[n].recount(row - int(self.first_row[n]))


_MATCHING_KEPT = 256

# A view is built once per record (the record's key names it).
_CACHE: dict[RecordKey, View] = {}
_CACHE_SIZE = 16


def visible_view(session: Session, cohort: str | None) -> View:
    """The public record as of *cohort* (``public.published_record``) as one table."""
    record = published_record(session, cohort)
    cached = _CACHE.get(record.key)
    if cached is not None:
        return cached
    return remember(_CACHE, _CACHE_SIZE, record.key, View.of(record.curves, record.packed))


class DatasetCount(BaseModel):
    id: str | None = Field(description="the dataset; null where the bundles do not say")
    curves: int


class BenchmarkView(BaseModel):
    id: str
    model: str
    agentic: bool
    curves: int
    datasets: list[DatasetCount] = Field(description="most curves first")
    dataset: str | None = Field(description="the dataset shown unless another is asked for")


def list_benchmarks(session: Session, cohort: str | None = None) -> list[BenchmarkView]:
    """The benchmarks with public curves as of *cohort* (refused by name when it is not a
    released cohort)."""
    return visible_view(session, checked_cohort(session, cohort)).benchmarks


def _benchmarks(visible: list[VisibleCurve]) -> list[BenchmarkView]:
    """Per benchmark model, the datasets its curves ran (most curves first): curves of
    different datasets are different measurements and never share a chart."""
    curves: dict[str, int] = {}
    agentic: dict[str, bool] = {}
    datasets: dict[str, dict[str | None, int]] = {}
    for curve in visible:
        if curve.status not in STATUSES:
            continue  # withdrawn/invalidated: an archive entry, not a curve
        if not curve.current:
            continue  # superseded: the newer result of its system is the one counted
        model = curve.benchmark_model
        curves[model] = curves.get(model, 0) + 1
        agentic.setdefault(model, curve.is_agentic)
        counts = datasets.setdefault(model, {})
        dataset = curve.dataset or None
        counts[dataset] = counts.get(dataset, 0) + 1
    out = []
    for model, n in curves.items():
        ranked = sorted(datasets[model].items(), key=lambda kv: (-kv[1], kv[0] or ""))
        out.append(
            BenchmarkView(
                id=model,
                model=model,
                agentic=agentic[model],
                curves=n,
                datasets=[DatasetCount(id=d, curves=c) for d, c in ranked],
                dataset=ranked[0][0],
            )
        )
    return sorted(out, key=lambda b: (b.agentic, b.id))


@dataclass(frozen=True)
class CurveColumns:
    """What the explorer's filters read of every curve of a view, as columns: a query
    over tens of thousands of curves is a few array comparisons."""

    benchmark: npt.NDArray[np.object_]
    dataset: npt.NDArray[np.object_]  # None where the bundles do not say
    status: npt.NDArray[np.object_]
    availability: npt.NDArray[np.object_]  # as filtered (availability_filed_as)
    division: npt.NDArray[np.object_]  # lower case, "" where none
    scenario: npt.NDArray[np.object_]  # lower case, "" where none
    power_estimated: npt.NDArray[np.bool_]
    current: npt.NDArray[np.bool_]
    organization: list[str]  # lower case, for a part of the name
    accelerator: list[str]  # lower case, "" where none
    accelerator_count: npt.NDArray[np.float64]  # NaN where none
    facts: dict[str, npt.NDArray[np.object_]]  # per facet, each curve's value, "" where none
    published: npt.NDArray[np.datetime64]  # the date of the cohort it first appeared in
    # Per benchmark and dataset, the facets' values: every page of the view offers them.
    listed: dict[tuple[str, str | None], dict[str, list[str]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, curves: list[VisibleCurve]) -> CurveColumns:
        def words(values: Iterable[str | None]) -> npt.NDArray[np.object_]:
            return np.array(list(values), dtype=np.object_)

        return cls(
            benchmark=words(c.benchmark_model for c in curves),
            dataset=words(c.dataset or None for c in curves),
            status=words(c.status for c in curves),
            availability=words(availability_filed_as(c.availability) for c in curves),
            division=words((c.division or "").lower() for c in curves),
            scenario=words((c.scenario or "").lower() for c in curves),
            power_estimated=np.array([c.power_estimated for c in curves], dtype=np.bool_),
            current=np.array([c.current for c in curves], dtype=np.bool_),
            organization=[c.organization.lower() for c in curves],
            accelerator=[(c.accelerator_model or "").lower() for c in curves],
            accelerator_count=np.array(
                [np.nan if c.accelerator_count is None else c.accelerator_count for c in curves],
                dtype=np.float64,
            ),
            facts={f: words(c.facts.get(f, "") for c in curves) for f in FACETS},
            published=np.array(
                [_cohort_day(c.published_in) for c in curves], dtype="datetime64[D]"
            ),
        )

    def of_benchmark(self, benchmark: str, dataset: str | None) -> npt.NDArray[np.bool_]:
        """Per curve, whether it is of *benchmark* on *dataset*."""
        on: npt.NDArray[np.bool_] = np.array([d == dataset for d in self.dataset], dtype=np.bool_)
        on &= self.benchmark == benchmark
        return on

    def facet_values(self, benchmark: str, dataset: str | None) -> dict[str, list[str]]:
        """Per facet, the values the record holds for *benchmark* on *dataset*: what the
        filters offer, so that none is typed that matches nothing."""
        found = self.listed.get((benchmark, dataset))
        if found is None:
            of = self.of_benchmark(benchmark, dataset)
            found = self.listed[(benchmark, dataset)] = {
                f: sorted({str(v) for v in values[of] if v}, key=_natural)
                for f, values in self.facts.items()
            }
        return found

    def matching(self, benchmark: str, dataset: str | None, q: ResultsQuery) -> list[int]:
        """The curves of *benchmark* on *dataset* that the query's statuses and filters
        keep, by their place in the view."""
        keep = self.of_benchmark(benchmark, dataset) & np.isin(self.status, list(q.statuses))
        keep &= np.isin(self.availability, list(q.availabilities))
        # A filter left blank keeps every curve; one given matches in any case.
        if q.division is not None:
            keep &= self.division == q.division.lower()
        if q.scenario is not None:
            keep &= self.scenario == q.scenario.lower()
        if q.exclude_estimated_power:
            keep &= ~self.power_estimated
        if not q.include_superseded:
            keep &= self.current
        # Part of the name, any case: "acme" finds Acme Corp.
        if q.organization is not None:
            part = q.organization.lower()
            keep &= np.array([part in name for name in self.organization], dtype=np.bool_)
        if q.accelerator is not None:
            part = q.accelerator.lower()
            keep &= np.array([part in name for name in self.accelerator], dtype=np.bool_)
        if q.accelerator_count is not None:
            keep &= self.accelerator_count == q.accelerator_count
        if q.facets:
            listed = self.facet_values(benchmark, dataset)
            for facet, value in q.facets:
                if value not in listed[facet]:
                    known = ", ".join(listed[facet]) or "none disclosed"
                    raise QueryProblem(
                        facet, f"no {benchmark} result discloses {facet} {value!r} ({known})"
                    )
                keep &= self.facts[facet] == value
        if q.published_from is not None:
            keep &= self.published >= np.datetime64(q.published_from)
        if q.published_to is not None:
            keep &= self.published <= np.datetime64(q.published_to)
        return np.flatnonzero(keep).tolist()


def _cohort_day(cohort: str) -> dt.date | None:
    parsed = Cohort.parse(cohort) if cohort else None
    return parsed.date if parsed is not None else None


def _natural(value: str) -> tuple[float, str]:
    """Numbers by their value ("2" before "16"), then words."""
    try:
        return float(value), value
    except ValueError:
        return math.inf, value.lower()


class ResultPoint(PublishedPoint):
    """A published point as the explorer shows it under a query."""

    region_name: str
    y: float | None = left_out_if_none("the normalised throughput, when normalize is not system")
    usd_per_million_tokens: float | None = left_out_if_none(
        f"at the buyer's price ({NOT_AN_MLPERF_FIGURE})"
    )
    admissible: bool = Field(description="meets the query's SLA")
    slo_attainment: float | None = left_out_if_none(
        "share of the window's requests that met the SLA (failed and unfinished ones missed "
        "it), from the point's re-counted events"
    )
    goodput_tps: float | None = left_out_if_none(
        "output tokens/s of the requests that met the SLA, over the window's duration"
    )
    goodput_requests: int | None = left_out_if_none("the requests goodput was counted over")
    goodput_window: str | None = left_out_if_none(
        "the window goodput covers (rules §2.3): steady_state (the steady-state window's "
        "requests over its issue-time span) or total (every tracked request over the point's "
        "reported duration)"
    )
    goodput_missing: str | None = left_out_if_none("why a point has no goodput")
    # Kept for the views built on this one (the accuracy view), left out of the explorer's
    # answer: a page of many curves would carry each point's detail for nothing.
    summary_fields: NewerSummaryFields | None = Field(default=None, exclude=True)
    accuracy_detail: PointAccuracy | None = Field(default=None, exclude=True)


class Ceiling(BaseModel):
    y: float = Field(description="the dedicated Offline run's throughput, normalised")
    concurrency: int


class ResultCurve(BaseModel):
    """A published curve under a query: its points marked admissible or not, its step
    line in the query's normalisation, and its best admissible point."""

    id: int
    submission: str
    status: str = Field(description="verified, provisional, unverified, withdrawn, invalidated")
    peer_review_pending: bool = Field(
        default=False, description="a provisional result: preliminary until peer review ends"
    )
    published_in: str = Field(description="the cohort the result first appeared in")
    result_id: str | None
    system: str
    system_dir: str
    organization: str
    division: str | None = Field(description="Standardized, Serviced or RDI")
    availability: str | None = Field(
        description="the publication status, as the rules spell it: Available, Preview or RDI"
    )
    scenario: str | None = Field(description="CoP or CoN (rules §2.1); null: not declared")
    result_name: str = Field(description='as the rules name it: "MLPerf Endpoints Serviced", …')
    tags: list[str] = Field(description=STANDING_TAGS)
    available_by: dt.date | None = Field(description="a Preview result's committed date")
    power_estimated: bool = Field(description="its power comes partly from the rules' defaults")
    superseded_by: str | None = Field(
        description="the cohort of the newer finalized result of the same system (§11.8)"
    )
    accelerator_model: str | None
    accelerator_count: int | None
    provisioned_power_kw: float | None
    benchmark: str
    dataset: str | None
    is_agentic: bool
    x_metric: str
    regions: dict[str, list[int]] | None
    points: list[ResultPoint]
    step_line: list[list[float]]
    offline_ceiling: Ceiling | None
    elected_offline: str | None
    best: str | None = Field(description="the best admissible point's folder")
    colour: str = Field(default=PALETTE[0], description="the system's colour on the chart")


class AxisView(BaseModel):
    id: str = Field(description="per_user, ttft, concurrency or throughput")
    field: str = Field(description="the key of each point that holds the axis's figure")
    title: str = Field(description="the axis's title, with the way that is better")
    direction: Direction = Field(
        description="higher or lower is better; none for concurrency (its steps are drawn "
        "as if more were better, as the official visualiser draws them)"
    )


class ChartAxes(BaseModel):
    x: AxisView
    y: AxisView
    better: str | None = Field(
        description="the arrow towards the chart's better corner (↗ for the default axes); "
        "null when an axis has no better way"
    )


THROUGHPUT_TITLES = {
    "kw": "tokens/s per kW (derived)",
    "accelerator": "tokens/s per accelerator (derived)",
    "usd_per_mtok": "output tokens per $ at your price (derived, not an MLPerf figure)",
}
GOODPUT_TITLE = "goodput: tokens/s of the requests in your SLA"


def _axis_view(axis_id: str, q: ResultsQuery, agentic: bool) -> AxisView:
    axis = AXES[axis_id]
    field, title = {
        "per_user": (per_user_metric(agentic), per_user_title(agentic)),
        "ttft": ("ttft_p90_ms", "TTFT P90 (ms)"),
        "concurrency": ("concurrency", "concurrency (users)"),
    }.get(axis_id) or _throughput_axis(q)
    return AxisView(
        id=axis_id, field=field, title=with_direction(title, axis), direction=axis.direction
    )


def _throughput_axis(q: ResultsQuery) -> tuple[str, str]:
    """Throughput's field and title in the query's normalisation (or goodput)."""
    if q.rank_by == "goodput":
        return "y", GOODPUT_TITLE
    if q.normalize in DERIVED or q.price is not None:
        return "y", THROUGHPUT_TITLES.get(q.normalize, "system tokens/s")
    return "system_tps", "system tokens/s"


def chart_axes(q: ResultsQuery, agentic: bool) -> ChartAxes:
    x, y = AXES[q.x_axis], AXES[q.y_axis]
    return ChartAxes(
        x=_axis_view(q.x_axis, q, agentic),
        y=_axis_view(q.y_axis, q, agentic),
        better=better_corner(x, y),
    )


NO_EVENTS = "no re-counted events for this point"
# Many small models are validated from plain data in one pass each.
_POINTS = TypeAdapter(list[ResultPoint])


@dataclass(frozen=True)
class PointGoodput:
    """Per row of a view's point table, what its request log says under the SLA (NaN,
    or -1 requests, where the point has none)."""

    attainment: npt.NDArray[np.float64]
    goodput_tps: npt.NDArray[np.float64]
    requests: npt.NDArray[np.int64]
    window: list[str | None]  # which window each figure covers (RequestLogRow.window)


# Request logs never change once written; the index over a set of them is kept, keyed by
# the logs it holds (twelve bytes a request: two keep the largest views in memory).
_INDEXES: dict[tuple[tuple[int, bool], ...], GoodputIndex] = {}
_INDEXES_SIZE = 2


# Submission id → point label → (the latest re-count's log id, its duration in ms).
_PLANS_SIZE = 8  # per view: the curve sets last asked for


@dataclass(frozen=True)
class GoodputPlan:
    """Which logs answer which rows of a view: the same for every SLA asked of the
    same curves, so it is worked out once."""

    rows: npt.NDArray[np.int64]  # table rows that have a log
    logs: tuple[tuple[int, bool], ...]  # the index's logs: (log id, agentic), sorted
    at: npt.NDArray[np.int64]  # per row, its log's place in `logs`
    seconds: npt.NDArray[np.float64]  # per row, the duration of its log's window
    windows: tuple[str, ...]  # per row, which window its log covers


def _goodput_plan(view: View, curves: list[int]) -> GoodputPlan:
    # The request record each point was published with (frozen: a later re-count shows
    # from the next publication on).
    wanted: list[tuple[int, tuple[int, bool], float, str]] = []
    with_log = view.marked(curves)[view.table.curve] & (view.request_log != NO_REQUEST_LOG)
    for row in np.flatnonzero(with_log & ~view.table.dedicated).tolist():
        frozen = view.recount_of(row)
        assert frozen is not None
        log = (frozen.request_log, view.curves[int(view.table.curve[row])].is_agentic)
        wanted.append((row, log, (frozen.duration_ms or 0) / 1000, frozen.window))
    logs = tuple(sorted({log for _r, log, _s, _w in wanted}))
    place = {log: n for n, log in enumerate(logs)}
    return GoodputPlan(
        rows=np.array([r for r, _l, _s, _w in wanted], dtype=np.int64),
        logs=logs,
        at=np.array([place[log] for _r, log, _s, _w in wanted], dtype=np.int64),
        seconds=np.array([seconds for _r, _l, seconds, _w in wanted], dtype=np.float64),
        windows=tuple(window for _r, _l, _s, window in wanted),
    )


def point_goodput(session: Session, view: View, curves: list[int], q: ResultsQuery) -> PointGoodput:
    """Goodput under *q*'s SLA for every point of the view's *curves* (indexes into
    ``view.curves``) published with a re-count: that re-count's request record."""
    rows = len(view.table)
    out = PointGoodput(
        np.full(rows, np.nan), np.full(rows, np.nan), np.full(rows, -1, np.int64), [None] * rows
    )
    plan_key = tuple(curves)
    plan = view.goodput_plans.get(plan_key)
    if plan is None:
        plan = remember(view.goodput_plans, _PLANS_SIZE, plan_key, _goodput_plan(view, curves))
    if not plan.logs:
        return out
    index = _INDEXES.get(plan.logs)
    if index is None:
        data = request_logs(session, (log_id for log_id, _a in plan.logs))
        index = GoodputIndex(
            # A record a publication froze is never deleted; were one gone, it counts nothing.
            [
                RequestLog.from_bytes(data[log_id]) if log_id in data else RequestLog()
                for log_id, _a in plan.logs
            ],
            [agentic for _l, agentic in plan.logs],
        )
        remember(_INDEXES, _INDEXES_SIZE, plan.logs, index)
    met, tokens = index.met(q.sla.ttft_p90_max_ms, q.sla.tps_per_user_min)
    requests = index.requests[plan.at]
    out.requests[plan.rows] = requests
    for row, window in zip(plan.rows.tolist(), plan.windows, strict=True):
        out.window[row] = window
    out.attainment[plan.rows], out.goodput_tps[plan.rows] = slo_rates(
        met[plan.at], tokens[plan.at], requests, plan.seconds
    )
    return out


@dataclass(frozen=True)
class Answer:
    """Every point of a view under a query, row by row (the table's rows)."""

    admissible: npt.NDArray[np.bool_]
    y: npt.NDArray[np.float64]  # what the chart and the ranking read
    cost: npt.NDArray[np.float64]
    goodput: PointGoodput | None
    best: npt.NDArray[np.int64]  # per curve of the view, its best row or -1


def answer(session: Session, view: View, shown: list[int], q: ResultsQuery) -> Answer:
    """The query's SLA, normalisation, price and goodput over every point of the view's
    *shown* curves at once, and each curve's best point."""
    table = view.table
    in_view = view.marked(shown)[table.curve]
    ok = admissible_rows(table, q.sla)
    cost = usd_per_million_tokens_rows(table, q.price)
    goodput = point_goodput(session, view, shown, q) if q.wants_goodput else None
    if q.rank_by == "goodput" and goodput is not None:
        # Goodput judges every request against the latency limits itself; the point-level
        # limits that remain are the concurrency and the region.
        y = goodput.goodput_tps
        eligible = admissible_rows(
            table, Sla(concurrency_min=q.sla.concurrency_min, regions=q.sla.regions)
        )
    else:
        y = throughput_rows(table, q.normalize, q.price)
        eligible = ok
    best = best_rows(table, eligible & in_view, y, len(view.curves))
    return Answer(ok, y, cost, goodput, best)


def rounded(value: float, digits: int) -> float | None:
    """*value* to *digits* places; None for a figure the point lacks (NaN)."""
    return None if math.isnan(value) else round(value, digits)


def _curve_view(view: View, n: int, q: ResultsQuery, a: Answer) -> ResultCurve:
    curve = view.curves[n]
    snapshot = curve.snapshot
    agentic = curve.is_agentic
    by_goodput = q.rank_by == "goodput"
    derived = q.normalize != "system"
    first = int(view.first_row[n])
    rows = slice(first, first + len(snapshot.points))
    # Plain lists of this curve's rows: read item by item below.
    ys, costs, admitted = a.y[rows].tolist(), a.cost[rows].tolist(), a.admissible[rows].tolist()
    g = a.goodput
    if g is not None:
        attained, goodput, requests = (
            g.attainment[rows].tolist(),
            g.goodput_tps[rows].tolist(),
            g.requests[rows].tolist(),
        )
    points: list[dict[str, Any]] = []
    plotted: list[tuple[float, float]] = []
    dedicated: tuple[PublishedPoint, float] | None = None
    for i, point in enumerate(snapshot.points):
        y = None if math.isnan(ys[i]) else ys[i]
        logged = g is not None and requests[i] >= 0
        # Plain data: the curve's model validates all its points in one pass, faster
        # than a model each.
        points.append(
            {
                **point.__dict__,
                "region_name": region_name(point.region),
                "y": rounded(ys[i], 3) if derived or by_goodput else None,
                "usd_per_million_tokens": rounded(costs[i], 4),
                "admissible": admitted[i],
                "slo_attainment": rounded(attained[i], 4) if logged else None,
                "goodput_tps": rounded(goodput[i], 3) if logged else None,
                "goodput_requests": requests[i] if logged else None,
                "goodput_window": g.window[first + i] if g is not None and logged else None,
                "goodput_missing": NO_EVENTS
                if g is not None and not logged and point.offline != Offline.DEDICATED
                else None,
            }
        )
        if point.offline == Offline.DEDICATED:
            if y is not None:
                dedicated = (point, y)
            continue
        at = (_on_axis(q.x_axis, point, y), _on_axis(q.y_axis, point, y))
        if at[0] is not None and at[1] is not None:
            plotted.append((at[0], at[1]))
    steps = step_curve(plotted, AXES[q.x_axis].steps_higher, AXES[q.y_axis].steps_higher)
    ceiling = None
    # The Offline ceiling is a throughput: drawn where throughput is the y axis.
    if dedicated is not None and not by_goodput and q.y_axis == "throughput":
        ceiling = Ceiling(y=round(dedicated[1], 3), concurrency=dedicated[0].concurrency)
    best = int(a.best[n])
    return ResultCurve(
        id=curve.id,
        submission=curve.submission,
        status=curve.status,
        peer_review_pending=peer_review_pending(curve.status),
        published_in=curve.published_in,
        result_id=curve.result_id,
        system=curve.system_name,
        system_dir=snapshot.system_dir,
        organization=curve.organization,
        **standing_fields(curve),
        accelerator_model=curve.accelerator_model,
        accelerator_count=curve.accelerator_count,
        provisioned_power_kw=curve.provisioned_power_kw,
        benchmark=curve.benchmark_model,
        dataset=curve.dataset,
        is_agentic=agentic,
        x_metric=per_user_metric(agentic),
        regions=snapshot.regions,
        points=_POINTS.validate_python(points, context=AS_STORED),  # snapshot rounded when written
        step_line=[[round(x, 3), round(y, 3)] for x, y in steps.line],
        offline_ceiling=ceiling,
        elected_offline=snapshot.elected_offline,
        best=None if best < 0 else snapshot.points[best - first].dir,
    )


def _on_axis(axis_id: str, point: PublishedPoint, throughput: float | None) -> float | None:
    """*point*'s figure on an axis (throughput as the query normalises it)."""
    if axis_id == "throughput":
        return throughput
    if axis_id == "per_user":
        return point.per_user
    if axis_id == "ttft":
        return point.ttft_p90_ms
    return float(point.concurrency)


def default_benchmark(benchmarks: list[BenchmarkView]) -> str | None:
    """The benchmark a view shows when none is asked for."""
    chosen = _choose_benchmark(benchmarks, ResultsQuery())
    return chosen.id if chosen else None


def _choose_benchmark(benchmarks: list[BenchmarkView], q: ResultsQuery) -> BenchmarkView | None:
    if q.benchmark is None:
        # The benchmark with the most curves, so a newcomer sees the fullest chart (of the
        # workload's kind: agentic pipelines run the agentic benchmarks).
        fitting = [b for b in benchmarks if q.workload is None or b.agentic == q.workload.agentic]
        return max(
            fitting or benchmarks, key=lambda b: (b.curves, b.id == "llama3_1-8b"), default=None
        )
    for entry in benchmarks:
        if entry.id == q.benchmark:
            return entry
    where = f"cohort {q.cohort}" if q.cohort else "the current results"
    known = ", ".join(b.id for b in benchmarks) or "none"
    raise QueryProblem(
        "benchmark", f"no published curves for benchmark {q.benchmark!r} in {where} ({known})"
    )


class RankingRow(BaseModel):
    """A system's best admissible point, ranked by throughput."""

    rank: int
    system: str
    organization: str
    status: str
    peer_review_pending: bool = Field(default=False, description="a provisional result")
    curve: int = Field(description="the curve's id in `curves`")
    submission: str
    result_id: str | None
    accelerator_model: str | None
    accelerator_count: int | None
    provisioned_power_kw: float | None
    division: str | None
    availability: str | None = Field(description="Available, Preview or RDI")
    scenario: str | None
    result_name: str
    tags: list[str] = Field(description=STANDING_TAGS)
    power_estimated: bool
    point: str = Field(description="the point's folder")
    concurrency: int
    region: str | None
    throughput: float | None = Field(
        description="in the query's normalisation (usd_per_mtok: output tokens per dollar)"
    )
    usd_per_million_tokens: float | None = Field(
        description=f"at the buyer's price, if one was given ({NOT_AN_MLPERF_FIGURE})"
    )

    @computed_field(  # type: ignore[prop-decorator]
        description="output tokens per dollar: the same cost the other way up "
        f"({NOT_AN_MLPERF_FIGURE})"
    )
    @property
    def tokens_per_usd(self) -> float | None:
        cost = self.usd_per_million_tokens
        return round(1e6 / cost, 1) if cost else None

    slo_attainment: float | None = Field(description="the point's share of requests in the SLA")
    goodput_tps: float | None = Field(description="the point's goodput, tokens/s")
    goodput_window: str | None = Field(
        default=None, description="the window its goodput covers: steady_state or total"
    )
    system_tps: float
    system_tps_per_kw: float | None
    tps_per_user: float | None
    e2e_avg_interactivity: float | None
    ttft_p90_ms: float | None
    tpot_p90_ms: float | None
    cut_short: str | None = Field(
        default=None,
        description="a note when more than 5 % of the point's responses ended on the output "
        "length limit (finish_reason_counts)",
    )
    reporting_basis: ReportingBasisView | None = Field(
        default=None, description="the steady state the point declares (rules §2.3–2.4)"
    )
    runs: int | None = Field(
        default=None, description="where the point was reproduced: its runs (submitted + each)"
    )
    cv: float | None = Field(
        default=None,
        description="system tok/s over those runs: coefficient of variation, with 3+ runs "
        f"({NOT_AN_MLPERF_FIGURE})",
    )


class OfflineRow(BaseModel):
    """A system ranked by its Offline throughput: its dedicated Offline run, or the point
    it elected as its Offline result, whichever is higher (bundle-format §7.3)."""

    rank: int
    curve: int = Field(description="the published curve's id")
    system: str
    organization: str
    status: str
    submission: str
    result_id: str | None
    division: str | None
    availability: str | None = Field(description="Available, Preview or RDI")
    result_name: str
    tags: list[str] = Field(description=STANDING_TAGS)
    power_estimated: bool
    point: str = Field(description="the Offline point's folder")
    concurrency: int
    elected: bool = Field(
        description="the submission elected its highest-concurrency Online point as its "
        "Offline result (no dedicated run beat it)"
    )
    throughput: float = Field(description="in the query's normalisation")
    system_tps: float
    colour: str = Field(default=PALETTE[0], description="the system's colour on the charts")


def _offline_rows(view: View, shown: list[int], a: Answer) -> list[OfflineRow]:
    """Every shown system's Offline throughput, highest first."""
    found: list[tuple[float, int, int]] = []  # (throughput, curve, row)
    for n in shown:
        first = int(view.first_row[n])
        points = view.curves[n].snapshot.points
        best: tuple[float, int] | None = None
        for i, point in enumerate(points):
            y = float(a.y[first + i])
            if (
                point.offline != Offline.NONE
                and not math.isnan(y)
                and (best is None or y > best[0])
            ):
                best = (y, first + i)
        if best is not None:
            found.append((best[0], n, best[1]))
    found.sort(key=lambda f: (-f[0], view.curves[f[1]].organization, view.curves[f[1]].system_name))
    rows = []
    for rank, (throughput, n, row) in enumerate(found, start=1):
        curve = view.curves[n]
        point = curve.snapshot.points[row - int(view.first_row[n])]
        standing = standing_fields(curve)
        rows.append(
            OfflineRow(
                rank=rank,
                curve=curve.id,
                system=curve.system_name,
                organization=curve.organization,
                status=curve.status,
                submission=curve.submission,
                result_id=curve.result_id,
                division=standing["division"],
                availability=standing["availability"],
                result_name=standing["result_name"],
                tags=standing["tags"],
                power_estimated=standing["power_estimated"],
                point=point.dir,
                concurrency=point.concurrency,
                elected=point.offline == Offline.ELECTED,
                throughput=round(throughput, 3),
                system_tps=point.system_tps,
            )
        )
    keys = [system_key(r.organization, r.system) for r in rows]
    for offline_row, colour in zip(rows, colours(keys), strict=True):
        offline_row.colour = colour
    return rows


class Unranked(BaseModel):
    """A system none of whose points meets the SLA."""

    system: str
    organization: str
    status: str
    curve: int
    on_chart: bool = Field(description="its curve is in `curves`")


class MoreCurve(BaseModel):
    """A ranked system whose curve the chart leaves out (past `limit`): pin it with
    `curve=` to load it."""

    rank: int
    curve: int = Field(description="the curve's id, for `curve=`")
    system: str
    organization: str
    status: str
    point: str = Field(description="its best point's folder")
    concurrency: int
    throughput: float | None = Field(description="as `ranking` reads it")


_MORE = TypeAdapter(list[MoreCurve])


class SlaView(BaseModel):
    ttft_p90_max_ms: float | None
    tps_per_user_min: float | None
    concurrency_min: int | None
    region: str | None = Field(description="the one region asked for")
    regions: list[str] = Field(description="the regions admitted (all when empty)")
    suggested: list[str] = Field(description="the limits the workload suggested")

    @classmethod
    def of(cls, sla: Sla, region: str | None = None, suggested: Sequence[str] = ()) -> SlaView:
        return cls(
            ttft_p90_max_ms=sla.ttft_p90_max_ms,
            tps_per_user_min=sla.tps_per_user_min,
            concurrency_min=sla.concurrency_min,
            region=region,
            regions=list(sla.regions),
            suggested=list(suggested),
        )


class WorkloadView(BaseModel):
    """The buyer's workload: the regions that fit it and the SLA it suggests."""

    id: str
    title: str
    summary: str
    regions: list[str]
    regions_clause: str = Field(description="where the rules define those regions")
    agentic: bool
    ttft_p90_max_ms: float | None = Field(description="suggested, not a rule")
    tps_per_user_min: float | None = Field(description="suggested, not a rule")


class PresetView(BaseModel):
    """A price list the portal was given, never an MLPerf figure nor a quote."""

    id: str
    title: str
    label: str = Field(description='"preset: TITLE, as of DATE", as every surface shows it')
    source: str
    as_of: dt.date
    usd_per_accelerator_hour: dict[str, float] = Field(
        description="per accelerator model; a system whose model is not listed has no cost"
    )

    @classmethod
    def of(cls, preset: PricePreset) -> PresetView:
        return cls(
            id=preset.id,
            title=preset.title,
            label=preset.label,
            source=preset.source,
            as_of=preset.as_of,
            usd_per_accelerator_hour=dict(preset.usd_per_accelerator_hour),
        )


class PriceView(BaseModel):
    price_per_accelerator_hour: float | None
    price_per_system_hour: float | None
    preset: PresetView | None = Field(
        default=None, description="the preset the prices come from, if one was chosen"
    )

    @classmethod
    def of(cls, price: Price) -> PriceView:
        return cls(
            price_per_accelerator_hour=price.per_accelerator_hour,
            price_per_system_hour=price.per_system_hour,
            preset=PresetView.of(price.preset) if price.preset else None,
        )


class ResultsPage(BaseModel):
    """What the results explorer shows for a query, and what the API answers."""

    cohort: str | None = Field(description="the cohort shown (the latest, for the current view)")
    current: bool = Field(description="the current results rather than a cohort as published")
    benchmark: str | None
    dataset: str | None
    benchmarks: list[BenchmarkView]
    statuses: list[str]
    availabilities: list[str] = Field(description="the publication statuses shown")
    scenario: str | None = Field(description="the scenario asked for, if any")
    estimated_power: str = Field(description="include or exclude MLC Estimated Power")
    basis: str = Field(description="any, or steady: only steady-state points meet the query")
    superseded: str = Field(description="exclude (current results only) or include")
    normalize: str
    derived: bool = Field(
        description="a figure the portal derives is shown: normalised throughput, or a cost "
        "at the buyer's price"
    )
    derived_label: str | None = Field(description="how a derived figure is labelled")
    rank_by: str = Field(description="throughput (in the normalisation) or goodput")
    goodput: bool = Field(description="points carry goodput: the SLA has a latency limit")
    price: PriceView | None = Field(description="the buyer's price, for usd_per_mtok")
    workload: WorkloadView | None
    # No SLA: the ranking is of peak throughput at any latency, and says so.
    sla_set: bool
    sla: SlaView
    curves_total: int = Field(description="the curves that match the query")
    limit: int | None = Field(description="the most curves drawn in full; null: all")
    pinned: list[int] = Field(description="curve ids drawn because `curve=` asked for them")
    curves: list[ResultCurve] = Field(
        description="drawn in full: the best-ranked ones up to `limit`, and the pinned ones"
    )
    ranking: list[RankingRow] = Field(description="the ranked systems whose curves are drawn")
    more: list[MoreCurve] = Field(
        description=f"the ranked systems not drawn, by rank: up to {LISTED} from `more_from`"
    )
    more_total: int = Field(description="the ranked systems not drawn, all of them")
    more_from: int = Field(description="the rank `more` lists from (`more_from=`)")
    no_admissible_point: list[Unranked] = Field(
        description=f"the systems with no admissible point, by name: the first {LISTED}"
    )
    no_admissible_total: int = Field(description="the systems with no admissible point, all")
    footnote: str | None
    result_names: str = Field(
        default="MLPerf Endpoints", description="the drawn results named as the rules name them"
    )
    axes: ChartAxes = Field(description="the chart's axes (`x=`, `y=`): figures and directions")
    facets: dict[str, list[str]] = Field(
        default_factory=dict,
        description="per disclosed facet (precision, accelerator_memory, interconnect, "
        "serving_software, nodes), the values the benchmark's results hold: what its filter takes",
    )
    view: str = Field(default="pareto", description="pareto, or offline (`offline`)")
    offline_ceiling: str = Field(
        default="show", description="show, off or lighten: how the chart draws the ceilings"
    )
    offline: list[OfflineRow] | None = Field(
        default=None,
        description="view=offline: every shown system by its Offline throughput, highest first",
    )


def shown_curves(view: View, q: ResultsQuery) -> tuple[str | None, str | None, list[int]]:
    """The benchmark and dataset the query shows (the fullest by default) and the curves
    of them that its statuses and filters keep, by their place in *view*."""
    chosen = _choose_benchmark(view.benchmarks, q)
    if chosen is None:
        return None, None, []
    benchmark, dataset = chosen.id, q.dataset or chosen.dataset
    if dataset not in [d.id for d in chosen.datasets]:
        known = ", ".join(str(d.id) for d in chosen.datasets)
        raise QueryProblem(
            "dataset", f"{benchmark} has no published curves on dataset {dataset!r} ({known})"
        )
    # Buyers move the SLA far more often than the filters: each filter's curves are kept.
    asked = (benchmark, dataset, q.statuses, q.availabilities, q.division, q.scenario,
             q.exclude_estimated_power, q.include_superseded, q.organization, q.accelerator,
             q.accelerator_count, q.facets, q.published_from, q.published_to)  # fmt: skip
    shown = view.matching.get(asked)
    if shown is None:
        shown = remember(
            view.matching, _MATCHING_KEPT, asked, view.columns.matching(benchmark, dataset, q)
        )
    return benchmark, dataset, list(shown)


def _charted(view: View, q: ResultsQuery, shown: list[int], in_order: list[int]) -> set[int]:
    """The curves the chart draws in full: all of them within the limit, else the best
    ranked ones (with fewer ranked, the others by name) and those the buyer pinned."""
    if q.limit is None or len(shown) <= q.limit:
        return set(shown)
    pinned = set(q.pinned)
    best = set(in_order[: q.limit])
    return best | {n for n in shown if view.curves[n].id in pinned} if pinned else best


def _ranking_row(rank: int, curve: ResultCurve, value: float | None) -> RankingRow:
    """A charted curve's line of the ranking: its best point under the query."""
    best = next(p for p in curve.points if p.dir == curve.best)
    return RankingRow(
        rank=rank,
        system=curve.system,
        organization=curve.organization,
        status=curve.status,
        peer_review_pending=curve.peer_review_pending,
        curve=curve.id,
        submission=curve.submission,
        result_id=curve.result_id,
        accelerator_model=curve.accelerator_model,
        accelerator_count=curve.accelerator_count,
        provisioned_power_kw=curve.provisioned_power_kw,
        division=curve.division,
        availability=curve.availability,
        scenario=curve.scenario,
        result_name=curve.result_name,
        tags=curve.tags,
        power_estimated=curve.power_estimated,
        point=best.dir,
        concurrency=best.concurrency,
        region=best.region,
        throughput=value,
        usd_per_million_tokens=best.usd_per_million_tokens,
        slo_attainment=best.slo_attainment,
        goodput_tps=best.goodput_tps,
        goodput_window=best.goodput_window,
        system_tps=best.system_tps,
        system_tps_per_kw=best.system_tps_per_kw,
        tps_per_user=best.tps_per_user,
        e2e_avg_interactivity=best.e2e_avg_interactivity,
        ttft_p90_ms=best.ttft_p90_ms,
        tpot_p90_ms=best.tpot_p90_ms,
        cut_short=best.cut_short,
        reporting_basis=best.reporting_basis,
        runs=best.repeatability.runs if best.repeatability else None,
        cv=best.repeatability.system_tps.cv if best.repeatability else None,
    )


def _ranked(
    view: View,
    q: ResultsQuery,
    ranked: npt.NDArray[np.int64],
    a: Answer,
    charted: set[int],
    on_chart: dict[int, ResultCurve],
) -> tuple[list[RankingRow], list[dict[str, Any]], int]:
    """The ranking's lines of the charted curves, and the page of the other ranked
    systems `more` lists (from rank ``more_from``), with how many there are in all
    (*ranked*: the curves with a best point, best first)."""
    drawn = np.isin(ranked, np.fromiter(charted, dtype=np.int64, count=len(charted)))
    ranking = [
        _ranking_row(rank, on_chart[view.curves[n].id], rounded(float(a.y[a.best[n]]), 3))
        for rank, n in zip(
            (np.flatnonzero(drawn) + 1).tolist(), ranked[drawn].tolist(), strict=True
        )
    ]
    others = np.flatnonzero(~drawn)  # places in the ranking, best first
    listed = others[np.searchsorted(others, q.more_from - 1) :][:LISTED].tolist()
    # Plain data: the page model validates it in one pass, faster than a model each.
    more: list[dict[str, Any]] = []
    for place in listed:
        n = int(ranked[place])
        curve, row = view.curves[n], int(a.best[n])
        more.append(
            {
                "rank": place + 1,
                "curve": curve.id,
                "system": curve.system_name,
                "organization": curve.organization,
                "status": curve.status,
                "point": view.dir_of(row),
                "concurrency": int(view.table.concurrency[row]),
                "throughput": rounded(float(a.y[row]), 3),
            }
        )
    return ranking, more, len(others)


def one_curve(session: Session, view: View, n: int, q: ResultsQuery) -> ResultCurve:
    """Curve *n* of *view* under the query, as the explorer draws it (its own colour)."""
    curve = _curve_view(view, n, q, answer(session, view, [n], q))
    curve.colour = colours([system_key(curve.organization, curve.system)])[0]
    return curve


def shown_by_name(view: View, q: ResultsQuery) -> list[int]:
    """The curves the query shows, in the order tables list them (organisation, system)."""
    ordered: list[int] = view.in_name_order(shown_curves(view, q)[2]).tolist()
    return ordered


def query_results(session: Session, q: ResultsQuery) -> ResultsPage:
    # No cohort asked for: the active page, labelled with the latest released cohort.
    cohort = q.cohort or latest_cohort(session)
    view = visible_view(session, q.cohort or None)
    benchmarks = view.benchmarks
    benchmark, dataset, shown = shown_curves(view, q)
    a = answer(session, view, shown, q)
    by_name = view.in_name_order(shown)
    has_best = a.best[by_name] >= 0
    ranked = by_name[has_best]
    # Highest first; the sort is stable, so equal values keep the names' order.
    ranked = ranked[np.argsort(-a.y[a.best[ranked]], kind="stable")]
    unranked = by_name[~has_best]  # by name; a strict SLA leaves thousands
    # The chart's first `limit` in order: the ranked ones, then (if fewer) the others.
    first = q.limit or 0
    charted = _charted(view, q, shown, ranked[:first].tolist() + unranked[:first].tolist())
    # The drawn curves, in the names' order: a handful of the view's thousands.
    drawn = by_name[np.isin(by_name, list(charted))].tolist()
    curves = [_curve_view(view, n, q, a) for n in drawn]
    for shown_curve, colour in zip(
        curves, colours([system_key(c.organization, c.system) for c in curves]), strict=True
    ):
        shown_curve.colour = colour  # one per system, the same as on every other chart
    on_chart = {c.id: c for c in curves}
    ranking, more, more_total = _ranked(view, q, ranked, a, charted, on_chart)
    return ResultsPage(
        cohort=cohort,
        current=not q.cohort,
        benchmark=benchmark,
        dataset=dataset,
        benchmarks=benchmarks,
        statuses=list(q.statuses),
        availabilities=list(q.availabilities),
        scenario=q.scenario,
        estimated_power="exclude" if q.exclude_estimated_power else "include",
        basis="steady" if q.sla.steady_only else "any",
        superseded="include" if q.include_superseded else "exclude",
        normalize=q.normalize,
        # A price makes a cost column whatever the normalisation: derived too.
        derived=q.normalize in DERIVED or q.price is not None,
        derived_label=NOT_AN_MLPERF_FIGURE
        if q.normalize in DERIVED or q.price is not None
        else None,
        rank_by=q.rank_by,
        goodput=q.wants_goodput,
        price=None if q.price is None else PriceView.of(q.price),
        workload=None if q.workload is None else WorkloadView.model_validate(q.workload.__dict__),
        sla_set=not q.sla.is_empty,
        sla=SlaView.of(q.sla, q.region, q.suggested),
        curves_total=len(shown),
        limit=q.limit,
        pinned=[c for c in q.pinned if c in on_chart],
        curves=curves,
        ranking=ranking,
        more=_MORE.validate_python(more),
        more_total=more_total,
        more_from=q.more_from,
        no_admissible_point=[
            Unranked(
                system=view.curves[n].system_name,
                organization=view.curves[n].organization,
                status=view.curves[n].status,
                curve=view.curves[n].id,
                on_chart=view.curves[n].id in on_chart,
            )
            for n in unranked[:LISTED].tolist()
        ],
        no_admissible_total=len(unranked),  # the table lists them all
        footnote=PRELIMINARY_FOOTNOTE
        if any(peer_review_pending(c.status) for c in curves)
        else None,
        result_names=result_names(curves),
        axes=chart_axes(q, any(b.agentic for b in benchmarks if b.id == benchmark)),
        facets={} if benchmark is None else view.columns.facet_values(benchmark, dataset),
        view=q.view,
        offline_ceiling=q.offline_ceiling,
        offline=_offline_rows(view, shown, a) if q.view == "offline" else None,
    )
