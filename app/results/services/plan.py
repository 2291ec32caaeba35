"""The capacity planner: a buyer's load at their SLA, sized on every published curve.

It reads the explorer's own view (``query_results``: the public record, the same SLA
rule, the same filters and price), so a point the explorer marks as meeting the SLA is
the one the plan rests on; the arithmetic is ``app.results.domain.sizing``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.core.numbers import whole_number
from app.results.domain.presets import PricePreset
from app.results.domain.sizing import MOST_USERS, holding_point, requests_per_s, size
from app.results.domain.sla import NOT_AN_MLPERF_FIGURE
from app.results.services.public import QueryProblem
from app.results.services.query import ResultsParams, ResultsQuery, parse_results_query
from app.results.services.results import PriceView, ResultCurve, SlaView, Unranked, query_results

ASSUMED = (
    "and with them their accelerators, provisioned power and your hourly price. Assumes "
    "systems scale linearly, with no bottleneck shared between them; no value is "
    f"interpolated between measured points. Every figure here is {NOT_AN_MLPERF_FIGURE}."
)
USERS_METHOD = (
    "Of each curve's measured points that meet the SLA, the one with the highest "
    f"concurrency; systems needed = ⌈users / that concurrency⌉, {ASSUMED}"
)
RATE_METHOD = (
    "Of each curve's measured points that meet the SLA, the one with the highest "
    "throughput; one system answers system tokens/s ÷ output tokens per request requests "
    f"each second, so systems needed = ⌈requests/s ÷ that⌉, {ASSUMED}"
)
MOST_RATE = 10_000_000.0


class PlanRow(BaseModel):
    rank: int
    submission: str
    result_id: str | None
    system: str
    organization: str
    status: str
    peer_review_pending: bool
    availability: str | None = Field(description="Available, Preview or RDI")
    result_name: str = Field(description="as the rules name the result")
    tags: list[str] = Field(description="the rules' tags")
    power_estimated: bool = Field(description="its kW come partly from the rules' defaults")
    point: str = Field(description="the folder of the measured point the sizing rests on")
    concurrency: int = Field(description="the users one system holds at the SLA (measured)")
    requests_per_s: float | None = Field(
        description="with a requests/s load: the requests one system answers at the point"
    )
    system_tps: float
    tps_per_user: float | None = Field(description="or e2e interactivity, for agentic ones")
    ttft_p90_ms: float | None
    systems_needed: int = Field(
        description="copies of what the point ran on: the system, or the part of it its "
        "nodes_used engaged (engaged_share below one, §4.5.3)"
    )
    engaged_share: float = Field(description="the share of the system's nodes the point engaged")
    accelerator_model: str | None
    accelerators: int | None = Field(description="systems_needed × the accelerators it ran on")
    provisioned_kw: float | None = Field(
        description="systems_needed × its provisioned kW (the point's power denominator)"
    )
    usd_per_hour: float | None = Field(description="at your price; null without one")
    cut_short: str | None = Field(
        default=None,
        description="a note when more than 5 % of the point's responses ended on the output "
        "length limit: it may hold fewer users with full-length answers",
    )
    link: str = Field(description="the submission's page, where the point is listed")


class Plan(BaseModel):
    """Every published curve of a benchmark sized for the load, ranked by the fewest
    accelerators (the lowest $/hour with a price)."""

    benchmark: str | None
    dataset: str | None
    cohort: str | None
    current: bool
    users: int | None = Field(description="the concurrent users to hold")
    requests_per_s: float | None = Field(description="or the requests per second to answer")
    output_tokens_per_request: float | None = Field(
        description="with requests_per_s: the output tokens each request gets"
    )
    sla: SlaView
    price: PriceView | None
    ranked_by: str = Field(description="accelerators, or usd_per_hour with a price")
    derived: str = Field(description="how every figure of the plan is labelled")
    method: str
    rows: list[PlanRow]
    no_admissible_point: list[Unranked] = Field(
        description="curves with no measured point that meets the SLA: they cannot be sized "
        "(the first of them by name, as the results list them)"
    )
    no_admissible_total: int = Field(description="the curves that cannot be sized, all")
    footnote: str | None


@dataclass(frozen=True)
class Load:
    """The buyer's load: concurrent users, or requests/s of so many output tokens each."""

    users: int | None = None
    requests_per_s: float | None = None
    output_tokens_per_request: float | None = None


class PlanParams(ResultsParams):
    """The plan's parameters: the explorer's, and the load."""

    users: str | None = Field(None, description="the concurrent users to hold: a whole number ≥ 1")
    requests_per_s: str | None = Field(
        None, description="or the requests per second to answer (not with users)"
    )
    output_tokens_per_request: str | None = Field(
        None, description="with requests_per_s: the output tokens each request gets"
    )


def parse_load(params: PlanParams) -> Load:
    """``users``, or ``requests_per_s`` with ``output_tokens_per_request``; refused by
    name when neither, both, or a value that is not a load."""
    given = params.given
    users, rate = given("users"), given("requests_per_s")
    if users is not None and rate is not None:
        raise QueryProblem("requests_per_s", "give users or requests_per_s, not both")
    if users is None and rate is None:
        raise QueryProblem(
            "users", "users is required (the concurrent users to hold), or requests_per_s"
        )
    if users is not None:
        count = whole_number(users)
        if count is None or not 1 <= count <= MOST_USERS:
            raise QueryProblem(
                "users", f"users must be a whole number from 1 to {MOST_USERS:,}, not {users!r}"
            )
        return Load(users=count)
    per_s = _positive("requests_per_s", rate, MOST_RATE)
    tokens = given("output_tokens_per_request")
    if tokens is None:
        raise QueryProblem(
            "output_tokens_per_request",
            "requests_per_s needs output_tokens_per_request: the output tokens each request "
            "gets (your workload's output length)",
        )
    length = _positive("output_tokens_per_request", tokens, 1e6)
    return Load(requests_per_s=per_s, output_tokens_per_request=length)


def _positive(name: str, raw: str | None, most: float) -> float:
    try:
        value = float(raw or "")
    except ValueError:
        raise QueryProblem(name, f"{name} must be a number, not {raw!r}") from None
    if not math.isfinite(value) or not 0 < value <= most:
        raise QueryProblem(name, f"{name} must be a number more than 0 and at most {most:,.0f}")
    return value


def capacity_plan(
    session: Session, params: PlanParams, presets: Mapping[str, PricePreset] | None = None
) -> Plan:
    """The plan for its parameters: the explorer's parameters
    (benchmark, SLA, price or price preset, filters, cohort, statuses) and the load
    (``users``, or ``requests_per_s`` with ``output_tokens_per_request``)."""
    load = parse_load(params)
    query = parse_results_query(session, params, presets)
    view = query_results(session, replace(query, limit=None))
    rows: list[PlanRow] = []
    unmet = list(view.no_admissible_point)
    for curve in view.curves:
        held = holding_point(curve.points, by_rate=load.users is None)
        if held is None:
            continue
        rows.append(_row(curve, held, load, query))
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
        users=load.users,
        requests_per_s=load.requests_per_s,
        output_tokens_per_request=load.output_tokens_per_request,
        sla=view.sla,
        price=view.price,
        ranked_by="usd_per_hour" if priced else "accelerators",
        derived=NOT_AN_MLPERF_FIGURE,
        method=USERS_METHOD if load.users is not None else RATE_METHOD,
        rows=rows,
        no_admissible_point=unmet,
        no_admissible_total=view.no_admissible_total,
        footnote=view.footnote,
    )


def _row(curve: ResultCurve, held: int, load: Load, query: ResultsQuery) -> PlanRow:
    point = curve.points[held]
    rate = None
    if load.users is not None:
        demand, per_system = float(load.users), float(point.concurrency)
    else:
        assert load.requests_per_s is not None and load.output_tokens_per_request is not None
        rate = requests_per_s(point.system_tps, load.output_tokens_per_request)
        demand, per_system = load.requests_per_s, rate
    # A point that ran on part of the system (nodes_used, §4.5.3) is sized in that part.
    part = point.engaged
    sizing = size(
        demand,
        per_system,
        (part.accelerators if part else None) or curve.accelerator_count,
        (part.power_kw if part else None) or curve.provisioned_power_kw,
        query.price,
        part.share if part else 1.0,
        curve.accelerator_model,
    )
    return PlanRow(
        rank=0,
        submission=curve.submission,
        result_id=curve.result_id,
        system=curve.system,
        organization=curve.organization,
        status=curve.status,
        peer_review_pending=curve.peer_review_pending,
        availability=curve.availability,
        result_name=curve.result_name,
        tags=curve.tags,
        power_estimated=curve.power_estimated,
        point=point.dir,
        concurrency=point.concurrency,
        requests_per_s=round(rate, 3) if rate is not None else None,
        system_tps=point.system_tps,
        tps_per_user=point.per_user,
        ttft_p90_ms=point.ttft_p90_ms,
        systems_needed=sizing.systems,
        engaged_share=part.share if part else 1.0,
        accelerator_model=curve.accelerator_model,
        accelerators=sizing.accelerators,
        provisioned_kw=sizing.provisioned_kw,
        usd_per_hour=sizing.usd_per_hour,
        cut_short=point.cut_short,
        link=f"/submissions/{curve.submission}",
    )
