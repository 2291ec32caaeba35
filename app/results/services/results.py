"""What buyers see: published curves per cohort, filtered by an SLA and ranked.

Every page and API endpoint reads results through :func:`visible_curves`, the one place
that decides what is public (architecture, decision 6): the latest publication of each
submission up to the chosen cohort. Anonymous buyers see published results only; the
review roles that see more arrive with accounts.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from app.core.cohorts import Cohort
from app.core.refusals import Kind, Refused
from app.core.regions import REGIONS, Offline, region_name
from app.core.views import Timestamp, left_out_if_none
from app.db.models import CohortRelease, Publication, RequestLogRow, Submission
from app.publishing.domain.snapshot import CurveSnapshot, PublishedPoint, read_snapshot
from app.results.domain.goodput import RequestLog
from app.results.domain.pareto import step_curve
from app.results.domain.sla import (
    DERIVED,
    NORMALISATIONS,
    NOT_AN_MLPERF_FIGURE,
    Price,
    Sla,
    admissible,
    best_point,
    per_user,
    throughput,
    usd_per_million_tokens,
)
from app.results.domain.workloads import Workload, workloads

STATUSES = ("verified", "provisional", "unverified")
DEFAULT_STATUSES = ("verified", "provisional")  # unverified is off by default
PRELIMINARY_FOOTNOTE = (
    "Results tagged \u201cpeer review pending\u201d are preliminary and subject to change "
    "until peer review completes."
)


@dataclass(frozen=True)
class VisibleCurve:
    """A published curve as buyers see it: plain data, safe to keep between requests."""

    id: int
    submission: str
    status: str
    published_in: str
    result_id: str | None
    benchmark_model: str
    dataset: str | None
    is_agentic: bool
    system_name: str
    organization: str
    division: str | None
    availability: str | None
    accelerator_model: str | None
    accelerator_count: int | None
    provisioned_power_kw: float | None
    snapshot: CurveSnapshot


# Publications never change once written, so what a cohort shows can be kept until a newer
# publication appears; the key carries the newest publication id up to the cohort.
_CACHE: dict[tuple[str, str, int, int, int], list[VisibleCurve]] = {}
_CACHE_SIZE = 16


@dataclass
class ResultsQuery:
    benchmark: str | None = None
    dataset: str | None = None
    cohort: str | None = None
    statuses: tuple[str, ...] = DEFAULT_STATUSES
    sla: Sla = field(default_factory=Sla)
    division: str | None = None
    availability: str | None = None
    organization: str | None = None
    accelerator: str | None = None
    accelerator_count: int | None = None
    normalize: str = "system"
    price: Price | None = None
    workload: Workload | None = None
    region: str | None = None  # the one region asked for, if any (the SLA holds the regions)
    # The SLA values the workload suggested (the buyer gave none of their own).
    suggested: tuple[str, ...] = ()
    rank_by: str = "throughput"

    @property
    def wants_goodput(self) -> bool:
        """Goodput answers a latency SLA: a TTFT limit or a minimum rate per user."""
        return self.sla.ttft_p90_max_ms is not None or self.sla.tps_per_user_min is not None


ANY_REGION = "any"
RANKINGS = ("throughput", "goodput")
LARGEST_CONCURRENCY = 10_000_000  # far past any served endpoint; bigger is a typo


class QueryProblem(Refused):
    """A results query value that cannot be used; *field* names the parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__("bad-query", message, Kind.INVALID, field=field)
        self.field = field


def parse_results_query(session: Session, params: Any) -> ResultsQuery:
    """The results query from URL parameters: one parser for the page and the API, so
    both refuse the same values with the same words (*params*: a multi-dict)."""

    def text(name: str) -> str | None:
        return (params.get(name) or "").strip() or None

    def number(name: str, minimum: float = 0, positive: bool = False) -> float | None:
        raw = text(name)
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError:
            raise QueryProblem(name, f"{name} must be a number, not {raw!r}") from None
        if not math.isfinite(value) or value < minimum or (positive and value <= 0):
            least = "more than 0" if positive else f"at least {minimum:g}"
            raise QueryProblem(name, f"{name} must be a number of {least}")
        return value

    def count(name: str) -> int | None:
        raw = text(name)
        if raw is None:
            return None
        if not raw.isdigit() or not 1 <= int(raw) <= LARGEST_CONCURRENCY:
            raise QueryProblem(
                name,
                f"{name} must be a whole number from 1 to {LARGEST_CONCURRENCY:,}, not {raw!r}",
            )
        return int(raw)

    statuses = tuple(params.getlist("status")) or DEFAULT_STATUSES
    bad = [s for s in statuses if s not in STATUSES]
    if bad:
        raise QueryProblem("status", f"unknown status {bad[0]!r}; use {', '.join(STATUSES)}")
    normalize = text("normalize") or "system"
    if normalize not in NORMALISATIONS:
        raise QueryProblem(
            "normalize", f"normalize must be one of {', '.join(NORMALISATIONS)}, not {normalize!r}"
        )
    region = text("region")
    if region and region != ANY_REGION and region not in REGIONS:
        raise QueryProblem(
            "region", f"region must be one of {', '.join(REGIONS)} or any, not {region!r}"
        )
    workload_id = text("workload")
    workload = None
    if workload_id is not None:
        workload = workloads().get(workload_id)
        if workload is None:
            raise QueryProblem(
                "workload", f"workload must be one of {', '.join(workloads())}, not {workload_id!r}"
            )
    price = _price(number("price_per_accelerator_hour", positive=True),
                   number("price_per_system_hour", positive=True), normalize)  # fmt: skip
    # A workload suggests the SLA values the buyer did not give; a parameter that is in
    # the query, even empty, is the buyer's own.
    suggested: list[str] = []

    def limit(name: str) -> float | None:
        if name in params or workload is None:
            return number(name)
        value: float | None = getattr(workload, name)
        if value is not None:
            suggested.append(name)
        return value

    ttft_max, tpu_min = limit("ttft_p90_max_ms"), limit("tps_per_user_min")
    if region == ANY_REGION:
        regions: tuple[str, ...] = ()  # every region, whatever the workload suggests
    else:
        regions = (region,) if region else (workload.regions if workload else ())
    rank_by = text("rank_by") or "throughput"
    if rank_by not in RANKINGS:
        raise QueryProblem(
            "rank_by", f"rank_by must be one of {', '.join(RANKINGS)}, not {rank_by!r}"
        )
    if rank_by == "goodput":
        if ttft_max is None and tpu_min is None:
            raise QueryProblem(
                "rank_by",
                "rank_by=goodput needs a latency SLA: ttft_p90_max_ms or tps_per_user_min "
                "(goodput counts the requests that met it)",
            )
        if normalize != "system":
            raise QueryProblem(
                "rank_by",
                "rank_by=goodput ranks output tokens/s of the requests that met the SLA; "
                "use it with normalize=system",
            )
    cohort = text("cohort")
    if cohort is not None and not cohort_was_released(session, cohort):
        released = ", ".join(c.id for c in list_cohorts(session)) or "none yet"
        raise QueryProblem(
            "cohort", f"no cohort {cohort!r} has been published (published: {released})"
        )
    return ResultsQuery(
        benchmark=text("benchmark"),
        dataset=text("dataset"),
        cohort=cohort,
        statuses=statuses,
        sla=Sla(ttft_max, tpu_min, count("concurrency_min"), regions),
        division=text("division"),
        availability=text("availability"),
        organization=text("organization"),
        accelerator=text("accelerator"),
        accelerator_count=count("accelerator_count"),
        normalize=normalize,
        price=price,
        workload=workload,
        region=None if region == ANY_REGION else region,
        suggested=tuple(suggested),
        rank_by=rank_by,
    )


def _price(per_accelerator: float | None, per_system: float | None, normalize: str) -> Price | None:
    if per_accelerator is not None and per_system is not None:
        raise QueryProblem(
            "price_per_system_hour",
            "give price_per_accelerator_hour or price_per_system_hour, not both",
        )
    if per_accelerator is None and per_system is None:
        if normalize == "usd_per_mtok":
            raise QueryProblem(
                "normalize",
                "normalize=usd_per_mtok needs your price: price_per_accelerator_hour or "
                "price_per_system_hour (USD)",
            )
        return None
    return Price(per_accelerator_hour=per_accelerator, per_system_hour=per_system)


class CohortView(BaseModel):
    id: str = Field(examples=["2026-12-C0"])
    date: dt.date | None = Field(description="the cohort's Wednesday")
    published_at: Timestamp = Field(description="when the chair released it")
    publications: int = Field(description="the versions of results its record gained")


def list_cohorts(session: Session) -> list[CohortView]:
    """The released cohorts, newest first, with the versions each one's record gained."""
    counts = dict(
        session.execute(
            select(Publication.cohort, func.count(Publication.id))
            .where(Publication.in_record())
            .group_by(Publication.cohort)
        ).all()
    )
    out = []
    for release in session.scalars(select(CohortRelease).order_by(CohortRelease.cohort.desc())):
        cohort = Cohort.parse(release.cohort)
        out.append(
            CohortView(
                id=release.cohort,
                date=cohort.date if cohort else None,
                published_at=release.published_at,
                publications=counts.get(release.cohort, 0),
            )
        )
    return out


def latest_cohort(session: Session) -> str | None:
    """The latest cohort the chair released."""
    return session.scalar(select(func.max(CohortRelease.cohort)))


def cohort_was_released(session: Session, cohort: str) -> bool:
    return (
        session.scalar(select(CohortRelease.id).where(CohortRelease.cohort == cohort)) is not None
    )


def visible_curves(session: Session, cohort: str | None) -> list[VisibleCurve]:
    """The single visibility rule: each submission's latest version up to *cohort*, as
    that cohort showed it; None: the active page, the latest version of every submission
    (a withdrawal or invalidation since the last cohort shows at once)."""
    scope = Publication.in_record()
    if cohort is not None:
        scope = scope & (Publication.cohort <= cohort)
    # Versions are only ever added or removed from the record, never changed, so the
    # newest id and the counts of kept and removed ones name what the view shows; the
    # database is part of the key, since one process may serve more than one.
    newest, kept, removed = session.execute(
        select(
            func.max(Publication.id),
            func.count(Publication.id).filter(Publication.in_record()),
            func.count(Publication.removed_at),
        ).where(Publication.cohort <= cohort if cohort is not None else Publication.id.is_not(None))
    ).one()
    key = (str(session.get_bind().engine.url), cohort or "*", newest or 0, kept, removed)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    publications = session.scalars(
        select(Publication)
        .where(scope)
        .options(selectinload(Publication.curves), selectinload(Publication.submission))
        .order_by(Publication.submission_id, Publication.cohort.desc(), Publication.id.desc())
    ).all()
    latest: dict[int, Publication] = {}
    first_in: dict[int, str] = {}  # the cohort each result first appeared in
    for publication in publications:
        latest.setdefault(publication.submission_id, publication)
        first_in[publication.submission_id] = publication.cohort
    visible = [
        VisibleCurve(
            id=c.id,
            submission=p.submission.public_id,
            status=p.status,
            published_in=first_in[p.submission_id],
            result_id=c.result_id,
            benchmark_model=c.benchmark_model,
            dataset=c.dataset,
            is_agentic=c.is_agentic,
            system_name=c.system_name,
            organization=c.organization,
            division=c.division,
            availability=c.availability,
            accelerator_model=c.accelerator_model,
            accelerator_count=c.accelerator_count,
            provisioned_power_kw=c.provisioned_power_kw,
            snapshot=read_snapshot(c.snapshot_version, c.data),
        )
        for p in latest.values()
        for c in p.curves
    ]
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = visible
    return visible


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
    return _benchmarks(visible_curves(session, cohort))


def _benchmarks(visible: list[VisibleCurve]) -> list[BenchmarkView]:
    """Per benchmark model, the datasets its curves ran (most curves first): curves of
    different datasets are different measurements and never share a chart."""
    curves: dict[str, int] = {}
    agentic: dict[str, bool] = {}
    datasets: dict[str, dict[str | None, int]] = {}
    for curve in visible:
        if curve.status not in STATUSES:
            continue  # withdrawn/invalidated: an archive entry, not a curve
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


def _matches(curve: VisibleCurve, q: ResultsQuery) -> bool:
    def same(value: str | None, wanted: str | None) -> bool:
        return wanted is None or (value or "").lower() == wanted.lower()

    return (
        same(curve.division, q.division)
        and same(curve.availability, q.availability)
        and same(curve.organization, q.organization)
        and (
            q.accelerator is None
            or q.accelerator.lower() in (curve.accelerator_model or "").lower()
        )
        and (q.accelerator_count is None or curve.accelerator_count == q.accelerator_count)
    )


class ResultPoint(PublishedPoint):
    """A published point as the explorer shows it under a query."""

    region_name: str
    y: float | None = left_out_if_none("the normalised throughput, when normalize is not system")
    usd_per_million_tokens: float | None = left_out_if_none(
        f"at the buyer's price ({NOT_AN_MLPERF_FIGURE})"
    )
    admissible: bool = Field(description="meets the query's SLA")
    slo_attainment: float | None = left_out_if_none(
        "share of the point's requests that met the SLA (failed ones missed it), from its "
        "re-counted events"
    )
    goodput_tps: float | None = left_out_if_none(
        "output tokens/s of the requests that met the SLA, over the point's duration"
    )
    goodput_requests: int | None = left_out_if_none("the requests goodput was counted over")
    goodput_missing: str | None = left_out_if_none("why a point has no goodput")


class Ceiling(BaseModel):
    y: float = Field(description="the dedicated Offline run's throughput, normalised")
    concurrency: int


class ResultCurve(BaseModel):
    """A published curve under a query: its points marked admissible or not, its step
    line in the query's normalisation, and its best admissible point."""

    id: int
    submission: str
    status: str = Field(description="verified, provisional, unverified, withdrawn, invalidated")
    published_in: str = Field(description="the cohort the result first appeared in")
    result_id: str | None
    system: str
    system_dir: str
    organization: str
    division: str | None
    availability: str | None
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


NO_EVENTS = "no re-counted events for this point"


@dataclass(frozen=True)
class LoggedPoint:
    log: RequestLog
    duration_s: float


# Request logs never change once written: decoded ones are kept, by row id.
_LOGS: dict[int, RequestLog] = {}
_LOGS_SIZE = 4096


def request_logs(session: Session, submissions: set[str]) -> dict[tuple[str, str], LoggedPoint]:
    """(submission id, point label) → the latest re-count's request log of the point."""
    if not submissions:
        return {}
    rows = session.execute(
        select(
            RequestLogRow.id,
            Submission.public_id,
            RequestLogRow.point_label,
            RequestLogRow.duration_ms,
        )
        .join(Submission, Submission.id == RequestLogRow.submission_id)
        .where(Submission.public_id.in_(submissions))
        .order_by(RequestLogRow.id)
    ).all()
    latest = {(public_id, label): (row_id, duration) for row_id, public_id, label, duration in rows}
    missing = [row_id for row_id, _d in latest.values() if row_id not in _LOGS]
    if missing:
        for row_id, data in session.execute(
            select(RequestLogRow.id, RequestLogRow.data).where(RequestLogRow.id.in_(missing))
        ):
            if len(_LOGS) >= _LOGS_SIZE:
                _LOGS.pop(next(iter(_LOGS)))
            _LOGS[row_id] = RequestLog.from_bytes(data)
    return {
        key: LoggedPoint(_LOGS[row_id], (duration or 0) / 1000)
        for key, (row_id, duration) in latest.items()
        if row_id in _LOGS
    }


def _curve_view(
    curve: VisibleCurve, q: ResultsQuery, logs: dict[tuple[str, str], LoggedPoint]
) -> ResultCurve:
    snapshot = curve.snapshot
    agentic = curve.is_agentic
    by_goodput = q.rank_by == "goodput"
    derived = q.normalize != "system"
    accelerators = curve.accelerator_count
    points: list[tuple[ResultPoint, float | None, float | None]] = []
    for point in snapshot.points:
        y = throughput(point, q.normalize, accelerators, q.price)
        cost = usd_per_million_tokens(point, q.price, accelerators)
        goodput = None
        if q.wants_goodput and point.offline != Offline.DEDICATED:
            logged = logs.get(
                (curve.submission, f"{snapshot.system_dir}/{curve.benchmark_model}/{point.dir}")
            )
            if logged is not None:
                goodput = logged.log.goodput(
                    q.sla.ttft_p90_max_ms,
                    q.sla.tps_per_user_min,
                    logged.duration_s,
                    agentic=agentic,
                )
        attainment = goodput.slo_attainment if goodput else None
        good_tps = goodput.goodput_tps if goodput else None
        if by_goodput:
            y = good_tps
        # Built without validating again: the snapshot was validated when it was read.
        view = ResultPoint.model_construct(
            **dict(point),
            region_name=region_name(point.region),
            y=None if not (derived or by_goodput) or y is None else round(y, 3),
            usd_per_million_tokens=None if cost is None else round(cost, 4),
            admissible=admissible(point, q.sla, agentic),
            slo_attainment=None if attainment is None else round(attainment, 4),
            goodput_tps=None if good_tps is None else round(good_tps, 3),
            goodput_requests=goodput.requests if goodput else None,
            goodput_missing=NO_EVENTS
            if q.wants_goodput and goodput is None and point.offline != Offline.DEDICATED
            else None,
        )
        points.append((view, per_user(point, agentic), y))
    plotted = [
        (x, y)
        for p, x, y in points
        if p.offline != Offline.DEDICATED and x is not None and y is not None
    ]
    steps = step_curve(plotted)
    ceiling = None
    dedicated = next(((p, y) for p, _x, y in points if p.offline == Offline.DEDICATED), None)
    if dedicated is not None and dedicated[1] is not None and not by_goodput:
        ceiling = Ceiling(y=round(dedicated[1], 3), concurrency=dedicated[0].concurrency)
    if by_goodput:
        with_goodput = [p for p, _x, _y in points if p.goodput_tps is not None]
        best_dir = (
            max(with_goodput, key=lambda p: (p.goodput_tps or 0.0, -p.concurrency)).dir
            if with_goodput
            else None
        )
    else:
        best = best_point(
            snapshot.points,
            q.sla,
            agentic=agentic,
            normalize=q.normalize,
            accelerators=accelerators,
            price=q.price,
        )
        best_dir = None if best is None else best.dir
    return ResultCurve(
        id=curve.id,
        submission=curve.submission,
        status=curve.status,
        published_in=curve.published_in,
        result_id=curve.result_id,
        system=curve.system_name,
        system_dir=snapshot.system_dir,
        organization=curve.organization,
        division=curve.division,
        availability=curve.availability,
        accelerator_model=curve.accelerator_model,
        accelerator_count=curve.accelerator_count,
        provisioned_power_kw=curve.provisioned_power_kw,
        benchmark=curve.benchmark_model,
        dataset=curve.dataset,
        is_agentic=agentic,
        x_metric="e2e_avg_interactivity" if agentic else "tps_per_user",
        regions=snapshot.regions,
        points=[p for p, _x, _y in points],
        step_line=[[round(x, 3), round(y, 3)] for x, y in steps.line],
        offline_ceiling=ceiling,
        elected_offline=snapshot.elected_offline,
        best=best_dir,
    )


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
    curve: int = Field(description="the curve's id in `curves`")
    submission: str
    result_id: str | None
    accelerator_model: str | None
    accelerator_count: int | None
    provisioned_power_kw: float | None
    division: str | None
    availability: str | None
    point: str = Field(description="the point's folder")
    concurrency: int
    region: str | None
    throughput: float | None = Field(
        description="in the query's normalisation (usd_per_mtok: output tokens per dollar)"
    )
    usd_per_million_tokens: float | None = Field(
        description=f"at the buyer's price, if one was given ({NOT_AN_MLPERF_FIGURE})"
    )
    slo_attainment: float | None = Field(description="the point's share of requests in the SLA")
    goodput_tps: float | None = Field(description="the point's goodput, tokens/s")
    system_tps: float
    system_tps_per_kw: float | None
    tps_per_user: float | None
    e2e_avg_interactivity: float | None
    ttft_p90_ms: float | None
    tpot_p90_ms: float | None


class Unranked(BaseModel):
    """A system none of whose points meets the SLA."""

    system: str
    organization: str
    status: str
    curve: int


class SlaView(BaseModel):
    ttft_p90_max_ms: float | None
    tps_per_user_min: float | None
    concurrency_min: int | None
    region: str | None = Field(description="the one region asked for")
    regions: list[str] = Field(description="the regions admitted (all when empty)")
    suggested: list[str] = Field(description="the limits the workload suggested")


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


class PriceView(BaseModel):
    price_per_accelerator_hour: float | None
    price_per_system_hour: float | None


class ResultsPage(BaseModel):
    """What the results explorer shows for a query, and what the API answers."""

    cohort: str | None = Field(description="the cohort shown (the latest, for the current view)")
    current: bool = Field(description="the current results rather than a cohort as published")
    benchmark: str | None
    dataset: str | None
    benchmarks: list[BenchmarkView]
    statuses: list[str]
    normalize: str
    derived: bool = Field(description="throughput is normalised, not measured")
    derived_label: str | None = Field(description="how a derived figure is labelled")
    rank_by: str = Field(description="throughput (in the normalisation) or goodput")
    goodput: bool = Field(description="points carry goodput: the SLA has a latency limit")
    price: PriceView | None = Field(description="the buyer's price, for usd_per_mtok")
    workload: WorkloadView | None
    # No SLA: the ranking is of peak throughput at any latency, and says so.
    sla_set: bool
    sla: SlaView
    curves: list[ResultCurve]
    ranking: list[RankingRow]
    no_admissible_point: list[Unranked]
    footnote: str | None


def query_results(session: Session, q: ResultsQuery) -> ResultsPage:
    # No cohort asked for: the active page, labelled with the latest released cohort.
    cohort = q.cohort or latest_cohort(session)
    visible = visible_curves(session, q.cohort or None)
    benchmarks = _benchmarks(visible)
    chosen = _choose_benchmark(benchmarks, q)
    benchmark = chosen.id if chosen else None
    dataset = None
    if chosen is not None:
        dataset = q.dataset or chosen.dataset
        if dataset not in [d.id for d in chosen.datasets]:
            known = ", ".join(str(d.id) for d in chosen.datasets)
            raise QueryProblem(
                "dataset", f"{benchmark} has no published curves on dataset {dataset!r} ({known})"
            )
    curves: list[ResultCurve] = []
    if benchmark is not None:
        shown = [
            curve
            for curve in visible
            if curve.benchmark_model == benchmark
            and curve.status in q.statuses
            and (curve.dataset or None) == dataset
            and _matches(curve, q)
        ]
        logs = request_logs(session, {c.submission for c in shown}) if q.wants_goodput else {}
        curves = [_curve_view(curve, q, logs) for curve in shown]
    curves.sort(key=lambda c: (c.organization.lower(), c.system.lower()))
    ranked: list[tuple[float, RankingRow]] = []
    without = []
    for view in curves:
        best = next((p for p in view.points if p.dir == view.best), None)
        if best is None:
            without.append(
                Unranked(
                    system=view.system,
                    organization=view.organization,
                    status=view.status,
                    curve=view.id,
                )
            )
            continue
        value = (
            best.goodput_tps
            if q.rank_by == "goodput"
            else throughput(best, q.normalize, view.accelerator_count, q.price)
        )
        row = RankingRow(
            rank=0,
            system=view.system,
            organization=view.organization,
            status=view.status,
            curve=view.id,
            submission=view.submission,
            result_id=view.result_id,
            accelerator_model=view.accelerator_model,
            accelerator_count=view.accelerator_count,
            provisioned_power_kw=view.provisioned_power_kw,
            division=view.division,
            availability=view.availability,
            point=best.dir,
            concurrency=best.concurrency,
            region=best.region,
            throughput=value,
            usd_per_million_tokens=best.usd_per_million_tokens,
            slo_attainment=best.slo_attainment,
            goodput_tps=best.goodput_tps,
            system_tps=best.system_tps,
            system_tps_per_kw=best.system_tps_per_kw,
            tps_per_user=best.tps_per_user,
            e2e_avg_interactivity=best.e2e_avg_interactivity,
            ttft_p90_ms=best.ttft_p90_ms,
            tpot_p90_ms=best.tpot_p90_ms,
        )
        ranked.append((value or 0.0, row))
    ranked.sort(key=lambda pair: -pair[0])
    ranking = [row.model_copy(update={"rank": n}) for n, (_v, row) in enumerate(ranked, 1)]
    return ResultsPage(
        cohort=cohort,
        current=not q.cohort,
        benchmark=benchmark,
        dataset=dataset,
        benchmarks=benchmarks,
        statuses=list(q.statuses),
        normalize=q.normalize,
        derived=q.normalize in DERIVED,
        derived_label=NOT_AN_MLPERF_FIGURE if q.normalize in DERIVED else None,
        rank_by=q.rank_by,
        goodput=q.wants_goodput,
        price=None
        if q.price is None
        else PriceView(
            price_per_accelerator_hour=q.price.per_accelerator_hour,
            price_per_system_hour=q.price.per_system_hour,
        ),
        workload=None if q.workload is None else WorkloadView.model_validate(q.workload.__dict__),
        sla_set=not q.sla.is_empty,
        sla=SlaView(
            ttft_p90_max_ms=q.sla.ttft_p90_max_ms,
            tps_per_user_min=q.sla.tps_per_user_min,
            concurrency_min=q.sla.concurrency_min,
            region=q.region,
            regions=list(q.sla.regions),
            suggested=list(q.suggested),
        ),
        curves=curves,
        ranking=ranking,
        no_admissible_point=without,
        footnote=PRELIMINARY_FOOTNOTE if any(c.status == "provisional" for c in curves) else None,
    )
