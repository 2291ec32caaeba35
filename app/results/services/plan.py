"""The capacity planner: a buyer's load at their SLA, sized on every published curve.

It reads the explorer's own view (``query_results``: the public record, the same SLA
rule, the same filters and price), so a point the explorer marks as meeting the SLA is
the one the plan rests on; the arithmetic is ``app.results.domain.sizing``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.core.numbers import whole_number
from app.results.domain.sizing import MOST_USERS, holding_point, size
from app.results.domain.sla import NOT_AN_MLPERF_FIGURE
from app.results.services.public import QueryProblem
from app.results.services.results import (
    PriceView,
    ResultCurve,
    SlaView,
    Unranked,
    parse_results_query,
    query_results,
)

METHOD = (
    "Of each curve's measured points that meet the SLA, the one with the highest "
    "concurrency; systems needed = ⌈users / that concurrency⌉, and with them their "
    "accelerators, provisioned power and your hourly price. Assumes systems scale "
    "linearly, with no bottleneck shared between them; no value is interpolated between "
    f"measured points. Every figure here is {NOT_AN_MLPERF_FIGURE}."
)


class PlanRow(BaseModel):
    rank: int
    submission: str
    result_id: str | None
    system: str
    organization: str
    status: str
    peer_review_pending: bool
    point: str = Field(description="the folder of the measured point the sizing rests on")
    concurrency: int = Field(description="the users one system holds at the SLA (measured)")
    system_tps: float
    tps_per_user: float | None = Field(description="or e2e interactivity, for agentic ones")
    ttft_p90_ms: float | None
    systems_needed: int
    accelerator_model: str | None
    accelerators: int | None = Field(description="systems_needed × the system's accelerators")
    provisioned_kw: float | None = Field(description="systems_needed × its provisioned kW")
    usd_per_hour: float | None = Field(description="at your price; null without one")
    link: str = Field(description="the submission's page, where the point is listed")


class Plan(BaseModel):
    """Every published curve of a benchmark sized for the load, ranked by the fewest
    accelerators (the lowest $/hour with a price)."""

    benchmark: str | None
    dataset: str | None
    cohort: str | None
    current: bool
    users: int = Field(description="the concurrent users to hold")
    sla: SlaView
    price: PriceView | None
    ranked_by: str = Field(description="accelerators, or usd_per_hour with a price")
    derived: str = Field(description="how every figure of the plan is labelled")
    method: str
    rows: list[PlanRow]
    no_admissible_point: list[Unranked] = Field(
        description="curves with no measured point that meets the SLA: they cannot be sized"
    )
    footnote: str | None


def parse_users(params: Any) -> int:
    raw = (params.get("users") or "").strip()
    if not raw:
        raise QueryProblem("users", "users is required: the concurrent users to hold")
    users = whole_number(raw)
    if users is None or not 1 <= users <= MOST_USERS:
        raise QueryProblem(
            "users", f"users must be a whole number from 1 to {MOST_USERS:,}, not {raw!r}"
        )
    return users


def capacity_plan(session: Session, params: Any) -> Plan:
    """The plan for URL parameters (*params*: a multi-dict): the explorer's parameters
    (benchmark, SLA, price, filters, cohort, statuses) and ``users``."""
    users = parse_users(params)
    query = parse_results_query(session, params)
    view = query_results(session, replace(query, limit=None))
    rows: list[PlanRow] = []
    unmet = list(view.no_admissible_point)
    for curve in view.curves:
        held = holding_point(curve.points)
        if held is None:
            continue
        rows.append(_row(curve, held, users, query))
    priced = query.price is not None
    missing = float("inf")

    def order(row: PlanRow) -> tuple[float, float, str, str]:
        cost = row.usd_per_hour if priced else row.accelerators
        return (missing if cost is None else cost, row.systems_needed, row.system, row.submission)

    rows.sort(key=order)
    rows = [r.model_copy(update={"rank": n}) for n, r in enumerate(rows, start=1)]
    return Plan(
        benchmark=view.benchmark,
        dataset=view.dataset,
        cohort=view.cohort,
        current=view.current,
        users=users,
        sla=view.sla,
        price=view.price,
        ranked_by="usd_per_hour" if priced else "accelerators",
        derived=NOT_AN_MLPERF_FIGURE,
        method=METHOD,
        rows=rows,
        no_admissible_point=unmet,
        footnote=view.footnote,
    )


def _row(curve: ResultCurve, held: int, users: int, query: Any) -> PlanRow:
    point = curve.points[held]
    sizing = size(
        users, point.concurrency, curve.accelerator_count, curve.provisioned_power_kw, query.price
    )
    return PlanRow(
        rank=0,
        submission=curve.submission,
        result_id=curve.result_id,
        system=curve.system,
        organization=curve.organization,
        status=curve.status,
        peer_review_pending=curve.peer_review_pending,
        point=point.dir,
        concurrency=point.concurrency,
        system_tps=point.system_tps,
        tps_per_user=point.e2e_avg_interactivity if curve.is_agentic else point.tps_per_user,
        ttft_p90_ms=point.ttft_p90_ms,
        systems_needed=sizing.systems,
        accelerator_model=curve.accelerator_model,
        accelerators=sizing.accelerators,
        provisioned_kw=sizing.provisioned_kw,
        usd_per_hour=sizing.usd_per_hour,
        link=f"/submissions/{curve.submission}",
    )
