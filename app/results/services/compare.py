"""Which configuration, compared with which: 2 to 4 submissions' curves of one benchmark
on one chart, their points side by side, and every disclosure that differs."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.refusals import Kind
from app.publishing.domain.snapshot import PublishedPoint
from app.results.domain.colours import PALETTE, colours, system_key
from app.results.services.public import (
    STATUSES,
    PublicCurve,
    QueryProblem,
    footnotes,
    present_decisions,
    public_curves,
    public_disclosures,
)
from app.settings import Settings

FEWEST, MOST = 2, 4


class ChartPoint(BaseModel):
    x: float
    y: float
    concurrency: int
    ttft_p90_ms: float | None


class ChartCurve(BaseModel):
    name: str
    status: str | None
    step_line: list[list[float]]
    points: list[ChartPoint]
    colour: str = Field(default=PALETTE[0], description="the system's colour (one per system)")


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


def x_title(agentic: bool) -> str:
    return "e2e avg interactivity (tok/s)" if agentic else "tokens/s per user (1000 / TPOT P90)"


def chart_curve(
    name: str,
    status: str | None,
    step_line: list[list[float]],
    points: Sequence[PublishedPoint],
    x_metric: str,
) -> ChartCurve:
    """A curve for the chart: its step line, and its fixed-concurrency points."""
    plotted = []
    for p in points:
        x = getattr(p, x_metric)
        if p.offline != "dedicated" and x is not None:
            plotted.append(
                ChartPoint(
                    x=x, y=p.system_tps, concurrency=p.concurrency, ttft_p90_ms=p.ttft_p90_ms
                )
            )
    return ChartCurve(name=name, status=status, step_line=step_line, points=plotted)


class Compared(BaseModel):
    submission: str
    organization: str
    system: str
    result_status: str | None
    peer_review_pending: bool = Field(description="a provisional result: preliminary")
    curve: PublicCurve = Field(description="the compared benchmark's curve, as published")


class PointRow(BaseModel):
    """One concurrency, each submission's point at it (null where it has none)."""

    concurrency: int
    system_tps: list[float | None]
    per_user: list[float | None] = Field(description="tokens/s per user, or e2e interactivity")
    ttft_p90_ms: list[float | None]


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

    def chart(self) -> Chart:
        return Chart(
            title=f"Pareto step curves · {self.benchmark}",
            x_title=x_title(self.is_agentic),
            curves=[
                chart_curve(
                    f"{s.system} ({s.organization}, {s.curve.label})",
                    s.result_status,
                    s.curve.step_line,
                    s.curve.points,
                    s.curve.x_metric,
                )
                for s in self.submissions
            ],
            caption=f"MLPerf Endpoints · compared · {self.benchmark} · the current results",
            footnotes=self.footnotes,
        ).coloured([system_key(s.organization, s.system) for s in self.submissions])


def compare(
    session: Session,
    settings: Settings,
    who: Principal | None,
    ids: Sequence[str],
    benchmark: str | None,
) -> Comparison:
    """2 to 4 results' curves of one benchmark, from the public record (as the results
    page shows them now), with the disclosures the visitor may see."""
    if not FEWEST <= len(ids) <= MOST:
        raise QueryProblem("submission", f"compare {FEWEST} to {MOST} submissions, not {len(ids)}")
    if len(set(ids)) != len(ids):
        raise QueryProblem("submission", "a submission is named twice")
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
    compared: list[Compared] = []
    facts: list[dict[str, str]] = []
    withheld: list[str] = []
    for public_id in ids:
        curve = next(c for c in by_submission[public_id] if c.benchmark_model == chosen)
        compared.append(
            Compared(
                submission=public_id,
                organization=curve.organization,
                system=curve.system,
                result_status=curve.status,
                peer_review_pending=curve.peer_review_pending,
                curve=curve,
            )
        )
        shown = public_disclosures(session, settings, who, public_id, curve.system_dir)
        if shown is None:
            withheld.append(public_id)
        facts.append(shown or {})
    agentic = compared[0].curve.is_agentic
    x_key = "e2e_avg_interactivity" if agentic else "tps_per_user"
    by_concurrency = [
        {p.concurrency: p for p in c.curve.points if p.offline != "dedicated"} for c in compared
    ]
    rows = []
    for concurrency in sorted(set().union(*by_concurrency)):
        at = [points.get(concurrency) for points in by_concurrency]
        rows.append(
            PointRow(
                concurrency=concurrency,
                system_tps=[p.system_tps if p else None for p in at],
                per_user=[getattr(p, x_key) if p else None for p in at],
                ttft_p90_ms=[p.ttft_p90_ms if p else None for p in at],
            )
        )
    # Disclosures are compared among the results whose disclosures may be shown.
    open_facts = [f for i, f in zip(ids, facts, strict=True) if i not in withheld]
    labels = list(dict.fromkeys(label for f in open_facts for label in f))
    differences: list[Difference] = []
    same: list[Difference] = []
    for label in labels:
        values = [None if i in withheld else f.get(label) for i, f in zip(ids, facts, strict=True)]
        compared_values = [f.get(label) for f in open_facts]
        (same if len(set(compared_values)) == 1 and not withheld else differences).append(
            Difference(field=label, values=values)
        )
    return Comparison(
        benchmark=chosen,
        benchmarks=common,
        is_agentic=agentic,
        submissions=compared,
        points=rows,
        differences=differences,
        same=same,
        withheld=withheld,
        footnotes=footnotes(c.curve for c in compared),
    )
