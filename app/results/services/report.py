"""A report per result (issue 49, item 3): what the official visualiser's report page
says of one result, from the same computation the explorer serves: a statement, cards of
what was submitted, the curve and its points, its neighbours in the view, and a citation."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.refusals import Kind
from app.core.regions import Offline
from app.publishing.services.change_log import ChangeLogEntry, change_log
from app.results.services.public import QueryProblem, public_disclosures, result_ref
from app.results.services.query import ResultsQuery
from app.results.services.results import (
    ChartAxes,
    ResultCurve,
    ResultsPage,
    View,
    chart_axes,
    one_curve,
    shown_by_name,
    visible_view,
)
from app.settings import Settings

MESSAGING_GUIDELINES = (
    "https://github.com/mlcommons/policies/blob/master/MLPerf_Results_Messaging_Guidelines.adoc"
)
# The disclosures sorted onto the official report's cards; the rest go on "System".
HARDWARE = (
    "Accelerator",
    "Accelerators",
    "Nodes",
    "Provisioned power (kW)",
    "Accelerator memory",
    "Accelerator interconnect",
    "Host processor",
    "Host memory",
    "Cooling",
)
SOFTWARE = (
    "Serving framework",
    "Model precision",
    "Driver",
    "Operating system",
    "Configuration summary",
    "Disaggregated serving",
    "Tensor parallel",
    "Pipeline parallel",
    "Expert parallel",
    "Data parallel",
    "Maximum batch size",
)


class Neighbour(BaseModel):
    ref: str = Field(description="its report's reference: a result id, or a curve id")
    system: str
    organization: str


class ResultReport(BaseModel):
    """One result as its report page shows it; `GET /api/v1/results/{ref}`."""

    ref: str
    cohort: str | None = Field(description="the cohort asked for; null: the current results")
    statement: str = Field(description="the result in one sentence")
    curve: ResultCurve
    axes: ChartAxes
    cards: dict[str, dict[str, str]] = Field(
        description="Submission, Model, System, Hardware, Software: label → value"
    )
    disclosures_withheld: bool = Field(
        description="the system's disclosures are not public yet (peer review pending, §11.9)"
    )
    position: int | None = Field(description="its place among the view's results (1-based)")
    of: int = Field(description="the results the view shows")
    previous: Neighbour | None
    next: Neighbour | None
    citation: str = Field(description="a paragraph to quote the result by")
    change_log: list[ChangeLogEntry] = Field(
        description="corrections of its non-result content after finalization (rules §11.7)"
    )
    messaging_guidelines: str = MESSAGING_GUIDELINES


def report_ref(curve: ResultCurve) -> str:
    return result_ref(curve.result_id, curve.id)


def _find(view: View, ref: str) -> int:
    for n, curve in enumerate(view.curves):
        if curve.result_id == ref or (ref.isdigit() and curve.id == int(ref)):
            return n
    raise QueryProblem("result", f"no published result {ref!r} in this view", Kind.NOT_FOUND)


def result_report(
    session: Session,
    settings: Settings,
    who: Principal | None,
    ref: str,
    q: ResultsQuery,
    today: dt.date,
) -> ResultReport:
    """Result *ref* under the query *q* (its cohort, normalisation and filters, which
    decide the neighbours); refused with 404 when the view has no such result."""
    view = visible_view(session, q.cohort or None)
    n = _find(view, ref)
    found = view.curves[n]
    # The neighbours are of the same benchmark and dataset, as the explorer shows them.
    q = dataclasses.replace(q, benchmark=found.benchmark_model, dataset=found.dataset)
    curve = one_curve(session, view, n, q)
    order = shown_by_name(view, q)
    at = order.index(n) if n in order else None

    def neighbour(step: int) -> Neighbour | None:
        if at is None or not 0 <= at + step < len(order):
            return None
        other = view.curves[order[at + step]]
        return Neighbour(
            ref=result_ref(other.result_id, other.id),
            system=other.system_name,
            organization=other.organization,
        )

    disclosures = public_disclosures(session, settings, who, curve.submission, curve.system_dir)
    return ResultReport(
        ref=report_ref(curve),
        cohort=q.cohort,
        statement=statement(curve),
        curve=curve,
        axes=chart_axes(q, curve.is_agentic),
        cards=cards(curve, disclosures or {}),
        disclosures_withheld=disclosures is None,
        position=None if at is None else at + 1,
        of=len(order),
        previous=neighbour(-1),
        next=neighbour(1),
        citation=citation(curve, settings.public_link(f"/results/{report_ref(curve)}"), today),
        change_log=change_log(session, curve.submission),
    )


def _online(curve: ResultCurve) -> list[Any]:
    return [p for p in curve.points if p.offline != Offline.DEDICATED]


def statement(curve: ResultCurve) -> str:
    """The result in one sentence: its peak throughput, its best per-user rate and the
    range of its TTFT P90, each with the concurrency it was measured at."""
    points = _online(curve)
    head = f"{curve.system} ({curve.organization}) on {curve.benchmark}" + (
        f" · {curve.dataset}" if curve.dataset else ""
    )
    if not points:
        return f"{head}: no Online point. {curve.result_name}, {curve.status}."
    peak = max(points, key=lambda p: p.system_tps)
    rated = [p for p in points if p.per_user is not None]
    quickest = max(rated, key=lambda p: p.per_user) if rated else None
    ttfts = [p.ttft_p90_ms for p in points if p.ttft_p90_ms is not None]
    per_user = "interactivity" if curve.is_agentic else "tokens/s per user"
    parts = [f"{peak.system_tps:,.1f} output tokens/s (at concurrency {peak.concurrency:,})"]
    if quickest is not None:
        parts.append(
            f"{quickest.per_user:,.1f} {per_user} (at concurrency {quickest.concurrency:,})"
        )
    sentence = f"{head}: up to {' and up to '.join(parts)}"
    if ttfts:
        sentence += f", TTFT P90 {min(ttfts):,.0f}–{max(ttfts):,.0f} ms"
    sentence += f", over {len(points)} concurrency levels"
    return f"{sentence}. {curve.result_name}, {curve.status}."


def cards(curve: ResultCurve, disclosed: dict[str, str]) -> dict[str, dict[str, str]]:
    """The official report's cards, from the record and the public disclosures."""
    submission = {
        "Result id": curve.result_id or "none (not verified)",
        "Organisation": curve.organization,
        "Submission": curve.submission,
        "Published in": curve.published_in,
        "Status": curve.status,
        "Division": curve.division or "—",
        "Publication status": curve.availability or "—",
        "Scenario": curve.scenario or "not declared",
        "Tags": ", ".join(curve.tags) or "none",
    }
    model = {"Benchmark": curve.benchmark, "Dataset": curve.dataset or "not stated"}
    known = {
        "Accelerator": curve.accelerator_model,
        "Accelerators": curve.accelerator_count,
        "Provisioned power (kW)": curve.provisioned_power_kw,
    }
    facts = {k: str(v) for k, v in known.items() if v is not None} | disclosed
    hardware = {k: facts[k] for k in HARDWARE if k in facts}
    software = {k: facts[k] for k in SOFTWARE if k in facts}
    # What the submission card says already (division, availability) is not said twice.
    said = {*hardware, *software, *submission, "Dataset", "Division", "Availability"}
    system = {"System": curve.system} | {k: v for k, v in facts.items() if k not in said}
    return {
        "Submission": submission,
        "Model": model,
        "System": system,
        "Hardware": hardware,
        "Software": software,
    }


def _named(curve: ResultCurve) -> str:
    """A result as a citation names it: who, what, the rules' name and its id."""
    which = f"result {curve.result_id}" if curve.result_id else f"unverified curve {curve.id}"
    return f"{curve.organization}, {curve.system}: {curve.result_name} {which}"


def _standing(curve: ResultCurve) -> str:
    if curve.available_by is not None:
        return f"{curve.status}; Preview — Available by {curve.available_by.isoformat()}"
    return curve.status


def citation(curve: ResultCurve, url: str, today: dt.date) -> str:
    """A paragraph to quote the result by, naming it as the rules name it."""
    return (
        f"{_named(curve)} ({curve.benchmark}{', ' + curve.dataset if curve.dataset else ''}), "
        f"published in cohort {curve.published_in}, {_standing(curve)}. MLCommons MLPerf "
        f"Endpoints, {url} (retrieved {today.isoformat()})."
    )


def view_citation(page: ResultsPage, url: str, today: dt.date) -> str:
    """A paragraph to quote a view of the explorer by: every result drawn, each named."""
    drawn = "; ".join(f"{_named(c)} ({_standing(c)})" for c in page.curves) or "no result"
    where = f"cohort {page.cohort}" if not page.current else "the current results"
    dataset = f" on {page.dataset}" if page.dataset else ""
    return (
        f"MLPerf Endpoints results for {page.benchmark}{dataset}, {where}: {drawn}. MLCommons "
        f"MLPerf Endpoints, {url} (retrieved {today.isoformat()})."
    )
