"""Which configuration, compared with which: 2 to 4 submissions' curves of one benchmark
on one chart, their points side by side, and every disclosure that differs."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from app.core.lifecycle import SubmissionState, result_status
from app.db.models import Curve, Submission, System
from app.publishing.domain.snapshot import PublishedPoint
from app.results.services.results import QueryProblem
from app.settings import Settings
from app.submissions.services.disclosures import system_disclosures
from app.submissions.services.views import CurveView, PointView, curve_view

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


class Chart(BaseModel):
    """Step curves to draw together (compare, history, agentic): what static/results/
    curves.js reads from the page."""

    title: str
    x_title: str
    curves: list[ChartCurve]


def x_title(agentic: bool) -> str:
    return "e2e avg interactivity (tok/s)" if agentic else "tokens/s per user (1000 / TPOT P90)"


def chart_curve(
    name: str,
    status: str | None,
    step_line: list[list[float]],
    points: Sequence[PublishedPoint | PointView],
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
    curve: CurveView = Field(description="the curve of the compared benchmark, active points")


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

    def chart(self) -> Chart:
        return Chart(
            title=f"Pareto step curves · {self.benchmark}",
            x_title=x_title(self.is_agentic),
            curves=[
                chart_curve(
                    f"{s.system} ({s.organization}, {s.result_status or '—'})",
                    s.result_status,
                    s.curve.step_line,
                    s.curve.points,
                    s.curve.x_metric,
                )
                for s in self.submissions
            ],
        )


def disclosed_facts(settings: Settings, submission: Submission, system_dir: str) -> dict[str, str]:
    """What a submission's system discloses, as compared: its description and the counts
    and power the results use (label → value; what it leaves out is not listed)."""
    system = next((s for s in submission.systems if s.dir_name == system_dir), None)
    fields = system_disclosures(settings, submission).get(system_dir, {}).get("fields", {})
    return _system_facts(system, fields)


def _system_facts(system: System | None, fields: dict[str, str]) -> dict[str, str]:
    def shown(value: object) -> str | None:
        return None if value is None or value == "" else str(value)

    facts = {
        "Accelerator": shown(system.accelerator_model) if system else None,
        "Accelerators": shown(system.accelerator_count) if system else None,
        "Nodes": shown(system.node_count) if system else None,
        "Provisioned power (kW)": shown(system.provisioned_power_kw) if system else None,
        "Division": shown(system.division) if system else None,
        "Availability": shown(system.availability) if system else None,
        **fields,
    }
    return {k: v for k, v in facts.items() if v is not None}


def compare(
    settings: Settings, submissions: Sequence[Submission], benchmark: str | None
) -> Comparison:
    if not FEWEST <= len(submissions) <= MOST:
        raise QueryProblem(
            "submission", f"compare {FEWEST} to {MOST} submissions, not {len(submissions)}"
        )
    if len({s.public_id for s in submissions}) != len(submissions):
        raise QueryProblem("submission", "a submission is named twice")
    shared = set.intersection(*({c.benchmark_model for c in s.curves} for s in submissions))
    agentic_of = {c.benchmark_model: c.is_agentic for s in submissions for c in s.curves}
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
    for submission in submissions:
        curve: Curve = next(c for c in submission.curves if c.benchmark_model == chosen)
        view = curve_view(curve, active_only=True)
        status = result_status(SubmissionState(submission.state), submission.for_review)
        compared.append(
            Compared(
                submission=submission.public_id,
                organization=submission.organization.name,
                system=view.system,
                result_status=status.value if status else None,
                curve=view,
            )
        )
        facts.append(disclosed_facts(settings, submission, view.system_dir))
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
    labels = list(dict.fromkeys(label for f in facts for label in f))
    differences: list[Difference] = []
    same: list[Difference] = []
    for label in labels:
        values = [f.get(label) for f in facts]
        (same if len(set(values)) == 1 else differences).append(
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
    )
