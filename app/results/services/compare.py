"""Which configuration, compared with which: 2 to 4 submissions' curves of one benchmark
on one chart, their points side by side, and every disclosure that differs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.per_user import per_user_title
from app.core.refusals import Kind
from app.publishing.domain.repeatability import Repeatability
from app.publishing.domain.snapshot import PublishedPoint
from app.results.domain.colours import PALETTE, colours, system_key
from app.results.domain.presets import price_presets
from app.results.domain.sla import PointTable, Sla, admissible_rows, best_rows
from app.results.services.public import (
    STATUSES,
    PublicCurve,
    QueryProblem,
    footnotes,
    present_decisions,
    public_curves,
    public_disclosures,
    result_names,
)
from app.results.services.query import ResultsParams, parse_results_query
from app.results.services.results import SlaView
from app.settings import Settings

FEWEST, MOST = 2, 4


class ChartPoint(BaseModel):
    x: float
    y: float
    concurrency: int
    ttft_p90_ms: float | None
    note: str | None = None  # e.g. its change against a baseline
    cut_short: str | None = None  # app.core.finish's note, when it carries one
    basis: str | None = None  # its reporting basis in words, where not the steady state


class ChartCurve(BaseModel):
    name: str
    status: str | None
    step_line: list[list[float]]
    points: list[ChartPoint]
    colour: str = Field(default=PALETTE[0], description="the system's colour (one per system)")
    availability: str | None = Field(default=None, description="Available, Preview or RDI")
    tags: list[str] = Field(default_factory=list, description="the rules' tags")


class Chart(BaseModel):
    """Step curves to draw together (compare, history, agentic): what static/results/
    curves.js reads from the page."""

    title: str
    x_title: str
    curves: list[ChartCurve]
    # What the page says around the chart, for the PNG that travels without it.
    caption: str = ""
    footnotes: list[str] = Field(default_factory=list)

    def coloured(self, keys: Sequence[str]) -> Chart:
        """The chart with each curve coloured by its key (app.results.domain.colours)."""
        return self.model_copy(
            update={
                "curves": [
                    c.model_copy(update={"colour": colour})
                    for c, colour in zip(self.curves, colours(keys), strict=True)
                ]
            }
        )


def chart_curve(
    name: str,
    status: str | None,
    step_line: list[list[float]],
    points: Sequence[PublishedPoint],
    availability: str | None = None,
    tags: Sequence[str] = (),
) -> ChartCurve:
    """A curve for the chart: its step line, and its fixed-concurrency points (each with
    its reporting basis where that is not the steady state)."""
    plotted = []
    for p in points:
        x = p.per_user
        if p.offline != "dedicated" and x is not None:
            plotted.append(
                ChartPoint(
                    x=x,
                    y=p.system_tps,
                    concurrency=p.concurrency,
                    ttft_p90_ms=p.ttft_p90_ms,
                    cut_short=p.cut_short,
                    basis=(
                        p.reporting_basis.label
                        if p.reporting_basis and not p.reporting_basis.steady
                        else None
                    ),
                )
            )
    return ChartCurve(
        name=name,
        status=status,
        step_line=step_line,
        points=plotted,
        availability=availability,
        tags=list(tags),
    )


class Compared(BaseModel):
    submission: str
    organization: str
    system: str
    result_status: str | None
    peer_review_pending: bool = Field(description="a provisional result: preliminary")
    curve: PublicCurve = Field(description="the compared benchmark's curve, as published")
    at_sla: AtSla = Field(description="its best point at the SLA (any latency without one)")


class PointRow(BaseModel):
    """One concurrency, each submission's point at it (null where it has none)."""

    concurrency: int
    system_tps: list[float | None]
    per_user: list[float | None] = Field(description="tokens/s per user, or e2e interactivity")
    ttft_p90_ms: list[float | None]
    system_tps_delta_pct: list[float | None] = Field(
        default_factory=list,
        description="with a baseline: each throughput's change against the baseline's at "
        "this concurrency, in % (null for the baseline, or where either has no point)",
    )
    per_user_delta_pct: list[float | None] = Field(
        default_factory=list, description="the same for the per-user rate"
    )
    cut_short: list[str | None] = Field(
        default_factory=list,
        description="per submission: a note where more than 5 % of the point's responses "
        "ended on the output length limit",
    )
    repeatability: list[Repeatability | None] = Field(
        default_factory=list,
        description="per submission: the point's runs and their spread, where it was reproduced",
    )


class AtSla(BaseModel):
    """A submission's best point at the buyer's SLA (the highest throughput that meets
    it, by the explorer's rule), and with a baseline its change against the baseline's."""

    point: str | None = Field(description="its folder; null: no point meets the SLA")
    concurrency: int | None
    system_tps: float | None
    per_user: float | None
    system_tps_delta_pct: float | None = None
    per_user_delta_pct: float | None = None
    cut_short: str | None = Field(
        default=None, description="the length-limit note of that point, if it carries one"
    )


class Difference(BaseModel):
    field: str
    values: list[str | None] = Field(description="one per submission, in order")


class Comparison(BaseModel):
    benchmark: str
    benchmarks: list[str] = Field(description="the benchmarks every compared submission ran")
    is_agentic: bool
    submissions: list[Compared]
    points: list[PointRow]
    differences: list[Difference] = Field(description="the disclosures whose values differ")
    same: list[Difference] = Field(description="the disclosures every submission shares")
    withheld: list[str] = Field(
        description="submissions whose disclosures are withheld during peer review (§11.9)"
    )
    footnotes: list[str]
    baseline: str | None = Field(default=None, description="the submission the deltas are against")
    sla: SlaView

    def chart(self) -> Chart:
        chart = Chart(
            title=f"Pareto step curves · {self.benchmark}",
            x_title=per_user_title(self.is_agentic),
            curves=[
                chart_curve(
                    f"{s.system} ({s.organization}, {s.curve.label})",
                    s.result_status,
                    s.curve.step_line,
                    s.curve.points,
                    s.curve.availability,
                    s.curve.tags,
                )
                for s in self.submissions
            ],
            caption=f"{result_names(s.curve for s in self.submissions)} · compared · "
            f"{self.benchmark} · the current results"
            + (f" · baseline: {self.baseline_name}" if self.baseline else ""),
            footnotes=self.footnotes,
        ).coloured([system_key(s.organization, s.system) for s in self.submissions])
        if self.baseline:  # each point's change against the baseline's, in its hover
            deltas = {row.concurrency: row for row in self.points}
            for n, curve in enumerate(chart.curves):
                for point in curve.points:
                    row = deltas.get(point.concurrency)
                    change = row.system_tps_delta_pct[n] if row else None
                    if change is not None:
                        point.note = f"{change:+.1f} % system tok/s vs the baseline"
        return chart

    @property
    def baseline_name(self) -> str:
        return next((s.system for s in self.submissions if s.submission == self.baseline), "")

    def export_rows(self) -> list[dict[str, Any]]:
        """The table as an export: a row per concurrency and submission with a point there,
        the deltas against the baseline's (where one is chosen) and the point's runs."""
        rows = []
        for row in self.points:
            for n, s in enumerate(self.submissions):
                if row.system_tps[n] is None:
                    continue
                point = next((p for p in s.curve.points if p.concurrency == row.concurrency), None)
                spread = _at(row.repeatability, n)
                rows.append({
                    "benchmark": self.benchmark,
                    "concurrency": row.concurrency,
                    "submission": s.submission,
                    "result_id": s.curve.result_id,
                    "organization": s.organization,
                    "system": s.system,
                    "status": s.result_status,
                    "baseline": s.submission == self.baseline,
                    "point": point.dir if point else None,
                    "system_tps": row.system_tps[n],
                    "per_user": row.per_user[n],
                    "ttft_p90_ms": row.ttft_p90_ms[n],
                    "system_tps_delta_pct": _at(row.system_tps_delta_pct, n),
                    "per_user_delta_pct": _at(row.per_user_delta_pct, n),
                    "cut_short": _at(row.cut_short, n),
                    "runs": spread.runs if spread else 1,
                    "cv": spread.system_tps.cv if spread else None,
                })  # fmt: skip
        return rows


COMPARE_COLUMNS = (
    "benchmark", "concurrency", "submission", "result_id", "organization", "system", "status",
    "baseline", "point", "system_tps", "per_user", "ttft_p90_ms", "system_tps_delta_pct",
    "per_user_delta_pct", "cut_short", "runs", "cv",
)  # fmt: skip


def _at(values: list[Any], n: int) -> Any:
    return values[n] if n < len(values) else None


def delta_pct(value: float | None, base: float | None) -> float | None:
    """*value*'s change against *base*, in % (one decimal); None without both."""
    if value is None or base is None or base == 0:
        return None
    return round((value - base) / base * 100, 1)


def compare(
    session: Session,
    settings: Settings,
    who: Principal | None,
    ids: Sequence[str],
    benchmark: str | None,
    baseline: str | None = None,
    sla: Sla | None = None,
) -> Comparison:
    """2 to 4 results' curves of one benchmark, from the public record (as the results
    page shows them now), with the disclosures the visitor may see; with a *baseline*
    (one of them), every other one's points and best point at the *sla* as a change
    against the baseline's."""
    sla = sla or Sla()
    by_submission = _curves_of(session, ids, baseline)
    shared = set.intersection(*({c.benchmark_model for c in by_submission[i]} for i in ids))
    agentic_of = {c.benchmark_model: c.is_agentic for i in ids for c in by_submission[i]}
    # Single-turn benchmarks first: the agentic ones are compared across models on their own.
    common = sorted(shared, key=lambda b: (agentic_of[b], b))
    if not common:
        raise QueryProblem(
            "submission", "these submissions share no benchmark, so no curve compares with another"
        )
    chosen = benchmark or common[0]
    if chosen not in common:
        raise QueryProblem(
            "benchmark", f"not every submission ran {chosen!r}; common: {', '.join(common)}"
        )
    compared = [_compared(public_id, by_submission[public_id], chosen) for public_id in ids]
    # What each one discloses, where the visitor may see it (None: withheld, §11.9).
    shown = [
        public_disclosures(session, settings, who, c.submission, c.curve.system_dir)
        for c in compared
    ]
    # The record's own facts are everyone's; the rest of the disclosures wait (§11.9).
    facts = [{**c.curve.record_facts(), **(f or {})} for c, f in zip(compared, shown, strict=True)]
    withheld = [i for i, f in zip(ids, shown, strict=True) if f is None]
    public = {label for c in compared for label in c.curve.record_facts()}
    base = ids.index(baseline) if baseline is not None else None
    rows = _point_rows(compared, base)
    best = [_best_at(c.curve, sla) for c in compared]
    best_tps = _deltas([b.system_tps for b in best], base)
    best_per_user = _deltas([b.per_user for b in best], base)
    for n, c in enumerate(compared):
        c.at_sla = best[n].model_copy(
            update={
                "system_tps_delta_pct": best_tps[n] if best_tps else None,
                "per_user_delta_pct": best_per_user[n] if best_per_user else None,
            }
        )
    differences, same = _disclosed(ids, facts, withheld, public)
    return Comparison(
        benchmark=chosen,
        benchmarks=common,
        is_agentic=compared[0].curve.is_agentic,
        submissions=compared,
        points=rows,
        differences=differences,
        same=same,
        withheld=withheld,
        footnotes=footnotes(c.curve for c in compared),
        baseline=baseline,
        sla=SlaView.of(sla),
    )


def _compared(public_id: str, curves: list[PublicCurve], benchmark: str) -> Compared:
    """The submission's curve of *benchmark*, its best point at the SLA still to find."""
    curve = next(c for c in curves if c.benchmark_model == benchmark)
    return Compared(
        submission=public_id,
        organization=curve.organization,
        system=curve.system,
        result_status=curve.status,
        peer_review_pending=curve.peer_review_pending,
        curve=curve,
        at_sla=AtSla(point=None, concurrency=None, system_tps=None, per_user=None),
    )


def _curves_of(
    session: Session, ids: Sequence[str], baseline: str | None
) -> dict[str, list[PublicCurve]]:
    """The public curves of each submission in *ids*, by submission; refused by name
    where there are too few or too many, one twice, or one not on the curves now."""
    if not FEWEST <= len(ids) <= MOST:
        raise QueryProblem("submission", f"compare {FEWEST} to {MOST} submissions, not {len(ids)}")
    if len(set(ids)) != len(ids):
        raise QueryProblem("submission", "a submission is named twice")
    if baseline is not None and baseline not in ids:
        raise QueryProblem("baseline", f"the baseline {baseline!r} is not one of the compared")
    by_submission: dict[str, list[PublicCurve]] = {}
    for curve in public_curves(session, None, STATUSES):
        by_submission.setdefault(curve.submission, []).append(curve)
    present = present_decisions(session)
    for public_id in ids:
        if public_id in by_submission:
            continue
        if public_id in present.archived:
            gone = present.archived[public_id]
            raise QueryProblem(
                "submission",
                f"submission {public_id!r} was {gone.status} on {gone.since:%Y-%m-%d}: it is no "
                "longer on the curves",
                Kind.NOT_FOUND,
            )
        raise QueryProblem(
            "submission", f"no published result has submission id {public_id!r}", Kind.NOT_FOUND
        )
    return by_submission


def _deltas(values: list[float | None], base: int | None) -> list[float | None]:
    """Each value as a % change against the baseline's (index *base*); none without one."""
    if base is None:
        return []
    return [None if n == base else delta_pct(v, values[base]) for n, v in enumerate(values)]


def _point_rows(compared: list[Compared], base: int | None) -> list[PointRow]:
    """A row per concurrency any of the curves measured: each one's point there."""
    by_concurrency = [
        {p.concurrency: p for p in c.curve.points if p.offline != "dedicated"} for c in compared
    ]
    rows = []
    for concurrency in sorted(set().union(*by_concurrency)):
        at = [points.get(concurrency) for points in by_concurrency]
        tps = [p.system_tps if p else None for p in at]
        rates = [p.per_user if p else None for p in at]
        rows.append(
            PointRow(
                concurrency=concurrency,
                system_tps=tps,
                per_user=rates,
                ttft_p90_ms=[p.ttft_p90_ms if p else None for p in at],
                system_tps_delta_pct=_deltas(tps, base),
                per_user_delta_pct=_deltas(rates, base),
                cut_short=[p.cut_short if p else None for p in at],
                repeatability=[p.repeatability if p else None for p in at],
            )
        )
    return rows


def _disclosed(
    ids: Sequence[str], facts: list[dict[str, str]], withheld: list[str], public: set[str]
) -> tuple[list[Difference], list[Difference]]:
    """The disclosures that differ and those that are the same, compared among the
    results whose disclosures may be shown; a *public* one (the record's) for every result."""
    labels = list(dict.fromkeys(label for f in facts for label in f))
    differences: list[Difference] = []
    same: list[Difference] = []
    for label in labels:
        hidden = [] if label in public else withheld
        values = [None if i in hidden else f.get(label) for i, f in zip(ids, facts, strict=True)]
        if all(v is None for v in values):
            continue
        compared_values = [v for i, v in zip(ids, values, strict=True) if i not in hidden]
        (same if len(set(compared_values)) == 1 and not hidden else differences).append(
            Difference(field=label, values=values)
        )
    return differences, same


class CompareParams(ResultsParams):
    """Compare's parameters: the submissions, the baseline, and the explorer's (the SLA
    of `at_sla` by the results' names and rules)."""

    submission: list[str] | None = Field(
        None, description=f"{FEWEST} to {MOST} submission ids, repeated: submission=…&submission=…"
    )
    baseline: str | None = Field(
        None,
        description="one of the compared submissions: every other one's points and best "
        "point at the SLA as a % change against its own",
    )


def compare_query(
    session: Session, settings: Settings, who: Principal | None, params: CompareParams
) -> Comparison:
    """A comparison from its parameters: ``submission`` (2 to 4), ``benchmark`` (default
    the first they all ran), ``baseline``, and the SLA."""
    query = parse_results_query(session, params, price_presets(settings.price_presets_file))
    sla = Sla(query.sla.ttft_p90_max_ms, query.sla.tps_per_user_min)
    return compare(
        session,
        settings,
        who,
        params.submission or [],
        params.given("benchmark"),
        baseline=params.given("baseline"),
        sla=sla,
    )


def _best_at(curve: PublicCurve, sla: Sla) -> AtSla:
    """*curve*'s highest-throughput point that meets *sla* (ties: the faster per user)."""
    table = PointTable.of([curve.points], [curve.is_agentic], [None])
    ok = admissible_rows(table, sla)
    chosen = best_rows(table, ok, table.system_tps, 1)[0]
    if chosen < 0:
        return AtSla(point=None, concurrency=None, system_tps=None, per_user=None)
    point = curve.points[chosen]
    return AtSla(
        cut_short=point.cut_short,
        point=point.dir,
        concurrency=point.concurrency,
        system_tps=point.system_tps,
        per_user=point.per_user,
    )
