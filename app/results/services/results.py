"""What buyers see: published curves per cohort, filtered by an SLA and ranked.

Every page and API endpoint reads results through :func:`visible_curves`, the one place
that decides what is public (architecture, decision 6): the latest publication of each
submission up to the chosen cohort. Anonymous buyers see published results only; the
review roles that see more arrive with accounts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from app.core.cohorts import Cohort
from app.core.refusals import Kind, Refused
from app.core.regions import REGIONS, region_name
from app.db.models import CohortRelease, Publication
from app.results.domain.pareto import step_curve
from app.results.domain.sla import NORMALISATIONS, Sla, admissible, best_point, per_user, throughput
from app.submissions.services.views import round_metrics

STATUSES = ("verified", "provisional", "unverified")
DEFAULT_STATUSES = ("verified", "provisional")  # unverified is off by default
PRELIMINARY_FOOTNOTE = (
    "Results tagged \u201cpeer review pending\u201d are preliminary and subject to change "
    "until peer review completes."
)


# What charts, tables and exports use of a point; the rest stays in the snapshot.
POINT_FIELDS = (
    "dir", "concurrency", "region", "offline", "system_tps", "tps_per_user", "tpot_p90_ms",
    "ttft_p90_ms", "e2e_avg_interactivity", "system_tps_per_kw", "accuracy",
)  # fmt: skip


def compact_point(point: dict[str, Any]) -> dict[str, Any]:
    """A point as published: the fields buyers use, rounded, without empty values."""
    view = {k: point[k] for k in POINT_FIELDS if point.get(k) not in (None, "none")}
    view["offline"] = point.get("offline") or "none"
    return round_metrics(view)


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
    data: dict[str, Any]


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

    def number(name: str, minimum: float = 0) -> float | None:
        raw = text(name)
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError:
            raise QueryProblem(name, f"{name} must be a number, not {raw!r}") from None
        if not math.isfinite(value) or value < minimum:
            raise QueryProblem(name, f"{name} must be a number of at least {minimum:g}")
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
    if region and region not in REGIONS:
        raise QueryProblem("region", f"region must be one of {', '.join(REGIONS)}, not {region!r}")
    cohort = text("cohort")
    if cohort is not None and not cohort_was_released(session, cohort):
        released = ", ".join(c["id"] for c in list_cohorts(session)) or "none yet"
        raise QueryProblem(
            "cohort", f"no cohort {cohort!r} has been published (published: {released})"
        )
    return ResultsQuery(
        benchmark=text("benchmark"),
        dataset=text("dataset"),
        cohort=cohort,
        statuses=statuses,
        sla=Sla(
            number("ttft_p90_max_ms"), number("tps_per_user_min"), count("concurrency_min"), region
        ),
        division=text("division"),
        availability=text("availability"),
        organization=text("organization"),
        accelerator=text("accelerator"),
        accelerator_count=count("accelerator_count"),
        normalize=normalize,
    )


def list_cohorts(session: Session) -> list[dict[str, Any]]:
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
            {
                "id": release.cohort,
                "date": cohort.date.isoformat() if cohort else None,
                "published_at": release.published_at.isoformat(),
                "publications": counts.get(release.cohort, 0),
            }
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
            data=c.data,
        )
        for p in latest.values()
        for c in p.curves
    ]
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = visible
    return visible


def list_benchmarks(session: Session, cohort: str | None = None) -> list[dict[str, Any]]:
    return _benchmarks(visible_curves(session, cohort))


def _benchmarks(visible: list[VisibleCurve]) -> list[dict[str, Any]]:
    """Per benchmark model, the datasets its curves ran (most curves first): curves of
    different datasets are different measurements and never share a chart."""
    found: dict[str, dict[str, Any]] = {}
    for curve in visible:
        if curve.status not in STATUSES:
            continue  # withdrawn/invalidated: an archive entry, not a curve
        entry = found.setdefault(
            curve.benchmark_model,
            {
                "id": curve.benchmark_model,
                "model": curve.benchmark_model,
                "agentic": curve.is_agentic,
                "curves": 0,
                "datasets": {},
            },
        )
        entry["curves"] += 1
        dataset = curve.dataset or ""
        entry["datasets"][dataset] = entry["datasets"].get(dataset, 0) + 1
    out = []
    for entry in found.values():
        datasets = sorted(entry["datasets"].items(), key=lambda kv: (-kv[1], kv[0]))
        entry["datasets"] = [{"id": d or None, "curves": n} for d, n in datasets]
        entry["dataset"] = entry["datasets"][0]["id"]  # the one shown unless another is asked
        out.append(entry)
    return sorted(out, key=lambda b: (b["agentic"], b["id"]))


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


def _curve_view(curve: VisibleCurve, q: ResultsQuery) -> dict[str, Any]:
    data = curve.data
    agentic = curve.is_agentic
    points = []
    derived = q.normalize != "system"
    for point in data["points"]:
        view = dict(point)
        view["region_name"] = region_name(point.get("region"))
        y = throughput(point, q.normalize, curve.accelerator_count)
        if derived:  # otherwise the plotted y is system_tps itself
            view["y"] = None if y is None else round(y, 3)
        view["admissible"] = admissible(point, q.sla, agentic)
        points.append((view, per_user(view, agentic), y))
    plotted = [
        (x, y)
        for p, x, y in points
        if p["offline"] != "dedicated" and x is not None and y is not None
    ]
    steps = step_curve(plotted)
    ceiling = None
    dedicated = next(((p, y) for p, _x, y in points if p["offline"] == "dedicated"), None)
    if dedicated is not None and dedicated[1] is not None:
        ceiling = {"y": round(dedicated[1], 3), "concurrency": dedicated[0]["concurrency"]}
    best = best_point(
        data["points"],
        q.sla,
        agentic=agentic,
        normalize=q.normalize,
        accelerators=curve.accelerator_count,
    )
    return {
        "id": curve.id,
        "submission": curve.submission,
        "status": curve.status,
        "published_in": curve.published_in,
        "result_id": curve.result_id,
        "system": curve.system_name,
        "system_dir": data.get("system_dir"),
        "organization": curve.organization,
        "division": curve.division,
        "availability": curve.availability,
        "accelerator_model": curve.accelerator_model,
        "accelerator_count": curve.accelerator_count,
        "provisioned_power_kw": curve.provisioned_power_kw,
        "benchmark": curve.benchmark_model,
        "dataset": curve.dataset,
        "is_agentic": agentic,
        "x_metric": "e2e_avg_interactivity" if agentic else "tps_per_user",
        "regions": data.get("regions"),
        "points": [p for p, _x, _y in points],
        "step_line": [[round(x, 3), round(y, 3)] for x, y in steps.line],
        "offline_ceiling": ceiling,
        "elected_offline": data.get("elected_offline"),
        "best": None if best is None else best["dir"],
    }


def _choose_benchmark(benchmarks: list[dict[str, Any]], q: ResultsQuery) -> dict[str, Any] | None:
    if q.benchmark is None:
        # The benchmark with the most curves, so a newcomer sees the fullest chart.
        return max(benchmarks, key=lambda b: (b["curves"], b["id"] == "llama3_1-8b"), default=None)
    for entry in benchmarks:
        if entry["id"] == q.benchmark:
            return entry
    where = f"cohort {q.cohort}" if q.cohort else "the current results"
    known = ", ".join(b["id"] for b in benchmarks) or "none"
    raise QueryProblem(
        "benchmark", f"no published curves for benchmark {q.benchmark!r} in {where} ({known})"
    )


def query_results(session: Session, q: ResultsQuery) -> dict[str, Any]:
    # No cohort asked for: the active page, labelled with the latest released cohort.
    cohort = q.cohort or latest_cohort(session)
    visible = visible_curves(session, q.cohort or None)
    benchmarks = _benchmarks(visible)
    chosen = _choose_benchmark(benchmarks, q)
    benchmark = chosen["id"] if chosen else None
    dataset = None
    if chosen is not None:
        dataset = q.dataset or chosen["dataset"]
        if dataset not in [d["id"] for d in chosen["datasets"]]:
            known = ", ".join(str(d["id"]) for d in chosen["datasets"])
            raise QueryProblem(
                "dataset", f"{benchmark} has no published curves on dataset {dataset!r} ({known})"
            )
    curves: list[dict[str, Any]] = []
    if benchmark is not None:
        for curve in visible:
            if curve.benchmark_model != benchmark or curve.status not in q.statuses:
                continue
            if (curve.dataset or None) != dataset:
                continue
            if _matches(curve, q):
                curves.append(_curve_view(curve, q))
    curves.sort(key=lambda c: (c["organization"].lower(), c["system"].lower()))
    ranking, without = [], []
    for view in curves:
        best = next((p for p in view["points"] if p["dir"] == view["best"]), None)
        if best is None:
            without.append(
                {
                    "system": view["system"],
                    "organization": view["organization"],
                    "status": view["status"],
                    "curve": view["id"],
                }
            )
            continue
        ranking.append(
            {
                "system": view["system"],
                "organization": view["organization"],
                "status": view["status"],
                "curve": view["id"],
                "submission": view["submission"],
                "result_id": view["result_id"],
                "accelerator_model": view["accelerator_model"],
                "accelerator_count": view["accelerator_count"],
                "provisioned_power_kw": view["provisioned_power_kw"],
                "division": view["division"],
                "availability": view["availability"],
                "point": best["dir"],
                "concurrency": best["concurrency"],
                "region": best.get("region"),
                "throughput": throughput(best, q.normalize, view["accelerator_count"]),
                "system_tps": best["system_tps"],
                "system_tps_per_kw": best.get("system_tps_per_kw"),
                "tps_per_user": best.get("tps_per_user"),
                "e2e_avg_interactivity": best.get("e2e_avg_interactivity"),
                "ttft_p90_ms": best.get("ttft_p90_ms"),
                "tpot_p90_ms": best.get("tpot_p90_ms"),
            }
        )
    ranking.sort(key=lambda r: -(r["throughput"] or 0))
    for rank, row in enumerate(ranking, start=1):
        row["rank"] = rank
    return {
        "cohort": cohort,
        "current": not q.cohort,
        "benchmark": benchmark,
        "dataset": dataset,
        "benchmarks": benchmarks,
        "statuses": list(q.statuses),
        "normalize": q.normalize,
        "derived": q.normalize != "system",
        # No SLA: the ranking is of peak throughput at any latency, and says so.
        "sla_set": not q.sla.is_empty,
        "sla": {
            "ttft_p90_max_ms": q.sla.ttft_p90_max_ms,
            "tps_per_user_min": q.sla.tps_per_user_min,
            "concurrency_min": q.sla.concurrency_min,
            "region": q.sla.region,
        },
        "curves": curves,
        "ranking": ranking,
        "no_admissible_point": without,
        "footnote": PRELIMINARY_FOOTNOTE
        if any(c["status"] == "provisional" for c in curves)
        else None,
    }
