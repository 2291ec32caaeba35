"""The results query: what the explorer and the results API are asked, parsed from URL
parameters by one parser for both, so each refuses the same values with the same words."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field
from sqlalchemy.orm import Session

from app.core.divisions import (
    Availability,
    Division,
    availability_of,
    division_of,
    scenario_of,
)
from app.core.numbers import whole_number
from app.core.params import UrlParams
from app.core.regions import REGIONS
from app.publishing.domain.facts import FACETS
from app.results.domain.axes import DEFAULT_X, DEFAULT_Y, X_AXES, Y_AXES
from app.results.domain.presets import PricePreset, price_presets
from app.results.domain.sla import (
    NORMALISATIONS,
    Price,
    Sla,
)
from app.results.domain.workloads import Workload, workloads
from app.results.services.public import (
    DEFAULT_STATUSES,
    STATUSES,
    QueryProblem,
    checked_cohort,
)

CHARTED = 10  # curves drawn in full by default: as many as the chart has colours
MOST_CHARTED = 500
# Systems not drawn listed in one answer (`more_from` pages on; the results table lists
# every one, 100 a page): a list a phone scrolls, and a fifth of the page that 200 were.
LISTED = 50


# RDI results stand apart (rules §11.10): ranked among the others only when asked for.
DEFAULT_AVAILABILITIES = (Availability.AVAILABLE.value, Availability.PREVIEW.value)
BASES = ("any", "steady")
INCLUDE_OR_EXCLUDE = ("include", "exclude")


@dataclass
class ResultsQuery:
    benchmark: str | None = None
    dataset: str | None = None
    cohort: str | None = None
    statuses: tuple[str, ...] = DEFAULT_STATUSES
    sla: Sla = field(default_factory=Sla)
    division: str | None = None
    availabilities: tuple[str, ...] = DEFAULT_AVAILABILITIES
    scenario: str | None = None
    exclude_estimated_power: bool = False
    include_superseded: bool = False
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
    x_axis: str = DEFAULT_X  # the chart's axes (app.results.domain.axes)
    y_axis: str = DEFAULT_Y
    # Disclosed facets asked for (app.publishing.domain.facts), each one value.
    facets: tuple[tuple[str, str], ...] = ()
    published_from: dt.date | None = None  # the cohort the result first appeared in
    published_to: dt.date | None = None
    view: str = "pareto"  # or offline: the systems by their Offline throughput
    offline_ceiling: str = "show"  # off, show, or lighten (the curves, beneath it)
    limit: int | None = CHARTED  # None: every curve in full (the exports)
    pinned: tuple[int, ...] = ()  # curve ids drawn past the limit
    more_from: int = 1  # the rank the list of systems not drawn starts from

    @property
    def wants_goodput(self) -> bool:
        """Goodput answers a latency SLA: a TTFT limit or a minimum rate per user."""
        return self.sla.ttft_p90_max_ms is not None or self.sla.tps_per_user_min is not None


VIEWS = ("pareto", "offline")
CEILINGS = ("show", "off", "lighten")
ANY_REGION = "any"
RANKINGS = ("throughput", "goodput")
LARGEST_CONCURRENCY = 10_000_000  # far past any served endpoint; bigger is a typo

A_COUNT = "a whole number ≥ 1"


class ResultsParams(UrlParams):
    """The results explorer's parameters, as the address gives them: the page, the
    results API, and the views built on the explorer (the plan, compare, accuracy)."""

    benchmark: str | None = Field(None, description="benchmark model, e.g. llama3_1-8b")
    dataset: str | None = Field(
        None, description="default: the benchmark's dataset with the most curves"
    )
    cohort: str | None = Field(
        None, description="YYYY-MM-C0/C1 as published; default the current results"
    )
    status: list[str] | None = Field(
        None, description=f"repeatable: {', '.join(STATUSES)}; default verified and provisional"
    )
    ttft_p90_max_ms: str | None = Field(None, description="the SLA's TTFT P90 limit: a number ≥ 0")
    tps_per_user_min: str | None = Field(
        None,
        description="the SLA's least tokens/s per user: a number ≥ 0 (e2e interactivity for "
        "agentic benchmarks)",
    )
    concurrency_min: str | None = Field(None, description=A_COUNT)
    region: str | None = Field(
        None, description=f"{', '.join(REGIONS)}, or any (default: the workload's regions)"
    )
    division: str | None = Field(None, description="Standardized, Serviced or RDI")
    availability: list[str] | None = Field(
        None,
        description="repeatable: Available, Preview, RDI (rules §11.10); default Available "
        "and Preview: RDI results are ranked only when asked for",
    )
    scenario: str | None = Field(
        None, description="cop (client on premises) or con (client over the network), §2.1"
    )
    estimated_power: str | None = Field(
        None,
        description="include (default) or exclude the results whose power comes partly from "
        "the rules' defaults (tagged MLC Estimated Power)",
    )
    basis: str | None = Field(
        None,
        description="any (default) or steady: only points whose numbers come from their "
        "steady-state window (rules §2.2) meet the query",
    )
    superseded: str | None = Field(
        None,
        description="exclude (default) or include the results a newer finalized result of "
        "the same system supersedes (rules §11.8; labelled so)",
    )
    precision: str | None = Field(
        None, description="the model precision disclosed, as the record lists it (`facets`)"
    )
    accelerator_memory: str | None = Field(
        None, description="the accelerator memory disclosed, as the record lists it"
    )
    interconnect: str | None = Field(
        None, description="the accelerator interconnect disclosed, as the record lists it"
    )
    serving_software: str | None = Field(
        None, description="the serving framework disclosed, as the record lists it"
    )
    nodes: str | None = Field(None, description="the system's node count, as the record lists it")
    published_from: str | None = Field(
        None, description="YYYY-MM-DD: results first published in a cohort on or after it"
    )
    published_to: str | None = Field(
        None, description="YYYY-MM-DD: results first published in a cohort on or before it"
    )
    organization: str | None = Field(None, description="matches part of the organisation's name")
    accelerator: str | None = Field(None, description="matches part of the accelerator name")
    accelerator_count: str | None = Field(None, description=A_COUNT)
    normalize: str | None = Field(
        None,
        description=f"{', '.join(NORMALISATIONS)}; default system (kw: per provisioned kW; "
        "usd_per_mtok: cost at your price, derived, not an MLPerf figure)",
    )
    workload: str | None = Field(
        None,
        description="interactive, batch or agentic: its regions and suggested SLA, for the "
        "limits you do not give",
    )
    price_per_accelerator_hour: str | None = Field(
        None, description="USD per accelerator-hour, your quote (usd_per_mtok)"
    )
    price_per_system_hour: str | None = Field(
        None, description="USD per system-hour, your quote (usd_per_mtok)"
    )
    price_preset: str | None = Field(
        None,
        description="a price list's id (GET /api/v1/price-presets) instead of your own "
        "price: each system at its accelerator model's preset price (not an MLPerf figure)",
    )
    rank_by: str | None = Field(
        None,
        description="throughput (default), or goodput: output tokens/s of the requests that "
        "met the SLA, from each point's re-counted events (needs a TTFT or per-user limit)",
    )
    x: str | None = Field(
        None,
        description=f"the chart's x axis: {', '.join(X_AXES)} (default {DEFAULT_X}; ttft is "
        "lower-is-better, and the step line turns the other way)",
    )
    y: str | None = Field(
        None,
        description=f"the chart's y axis: {', '.join(Y_AXES)} (default {DEFAULT_Y}, in the "
        "normalisation asked for)",
    )
    view: str | None = Field(
        None,
        description="pareto (default): the curves; offline: the systems ranked by their "
        "Offline throughput (a dedicated Offline run, or the point elected as Offline)",
    )
    offline_ceiling: str | None = Field(
        None,
        description="show (default) each curve's Offline ceiling where y is throughput, "
        "off, or lighten: the ceiling shown and the curves beneath it lightened",
    )
    limit: str | None = Field(
        None,
        description=f"the most curves drawn in full, best-ranked first (default {CHARTED}, "
        f"at most {MOST_CHARTED}, or all; 0: only the curves `curve=` pins); the other "
        "ranked systems are listed in `more`",
    )
    curve: list[str] | None = Field(
        None, description="repeatable: a curve id from `more`, drawn in full past the limit"
    )
    more_from: str | None = Field(
        None, description=f"the rank `more` lists from ({LISTED} at a time); default 1"
    )


def explorer_pairs(pairs: Iterable[tuple[str, str]], *left_out: str) -> list[tuple[str, str]]:
    """The explorer's own parameters among an address's *pairs*, each given a value, less
    *left_out*: what a link back to the explorer, or a view kept, carries."""
    fields = ResultsParams.model_fields
    return [(k, v) for k, v in pairs if v.strip() and k in fields and k not in left_out]


def parse_results_query(
    session: Session, params: ResultsParams, presets: Mapping[str, PricePreset] | None = None
) -> ResultsQuery:
    """The results query from its parameters: one parser for the page and the API, so
    both refuse the same values with the same words (*presets*: the price presets
    ``price_preset`` names, the shipped ones by default)."""
    text = params.given
    statuses = tuple(params.status or ()) or DEFAULT_STATUSES
    bad = [s for s in statuses if s not in STATUSES]
    if bad:
        raise QueryProblem("status", f"unknown status {bad[0]!r}; use {', '.join(STATUSES)}")
    normalize = _one_of("normalize", text("normalize") or "system", NORMALISATIONS)
    region = text("region")
    if region and region != ANY_REGION:
        _one_of("region", region, REGIONS, " or any")
    workload_id = text("workload")
    workload = None
    if workload_id is not None:
        workload = workloads()[_one_of("workload", workload_id, tuple(workloads()))]
    price = _price(_number(params, "price_per_accelerator_hour", positive=True),
                   _number(params, "price_per_system_hour", positive=True),
                   _preset(text("price_preset"), presets), normalize)  # fmt: skip
    # A workload suggests the SLA values the buyer did not give; a parameter that is in
    # the query, even empty, is the buyer's own.
    suggested: list[str] = []

    def limit(name: str) -> float | None:
        if getattr(params, name) is not None or workload is None:
            return _number(params, name)
        value: float | None = getattr(workload, name)
        if value is not None:
            suggested.append(name)
        return value

    ttft_max, tpu_min = limit("ttft_p90_max_ms"), limit("tps_per_user_min")
    if region == ANY_REGION:
        regions: tuple[str, ...] = ()  # every region, whatever the workload suggests
    else:
        regions = (region,) if region else (workload.regions if workload else ())
    steady_only = _one_of("basis", text("basis") or "any", BASES) == "steady"
    sla = Sla(ttft_max, tpu_min, _count(params, "concurrency_min"), regions, steady_only)
    rank_by = _rank_by(text("rank_by") or "throughput", sla, normalize)
    charted, pinned = _charted(params)
    return ResultsQuery(
        benchmark=text("benchmark"),
        dataset=text("dataset"),
        cohort=checked_cohort(session, text("cohort")),
        statuses=statuses,
        sla=sla,
        division=_division(text("division")),
        availabilities=_availabilities(params.availability, _division(text("division"))),
        scenario=_scenario(text("scenario")),
        exclude_estimated_power=_one_of(
            "estimated_power", text("estimated_power") or "include", INCLUDE_OR_EXCLUDE
        )
        == "exclude",
        include_superseded=_one_of(
            "superseded", text("superseded") or "exclude", INCLUDE_OR_EXCLUDE
        )
        == "include",
        organization=text("organization"),
        accelerator=text("accelerator"),
        accelerator_count=_count(params, "accelerator_count"),
        normalize=normalize,
        price=price,
        workload=workload,
        region=None if region == ANY_REGION else region,
        suggested=tuple(suggested),
        rank_by=rank_by,
        **_shown_how(params, rank_by),
        limit=charted,
        more_from=_count(params, "more_from") or 1,
        pinned=pinned,
    )


def _shown_how(params: ResultsParams, rank_by: str) -> dict[str, Any]:
    """The chart's axes and view, the Offline ceiling, the disclosed facets and the
    publication dates asked for."""
    text = params.given
    published_from = _day(text("published_from"), "published_from")
    published_to = _day(text("published_to"), "published_to")
    if published_from and published_to and published_from > published_to:
        raise QueryProblem(
            "published_to", f"published_to ({published_to}) is before published_from"
        )
    view = _one_of("view", text("view") or "pareto", VIEWS)
    if view == "offline" and rank_by == "goodput":
        raise QueryProblem(
            "view",
            "the Offline view ranks Offline throughput, which no SLA limits: use it with "
            "rank_by=throughput",
        )
    x_axis, y_axis = _axes(text("x"), text("y"))
    return {
        "x_axis": x_axis,
        "y_axis": y_axis,
        "facets": tuple((f, value) for f in FACETS if (value := text(f)) is not None),
        "published_from": published_from,
        "published_to": published_to,
        "view": view,
        "offline_ceiling": _one_of("offline_ceiling", text("offline_ceiling") or "show", CEILINGS),
    }


def _division(text: str | None) -> str | None:
    if text is None:
        return None
    found = division_of(text)
    if found is None:
        raise QueryProblem(
            "division", f"division must be one of {', '.join(Division)}, not {text!r}"
        )
    return found.value


def _availabilities(asked: Sequence[str] | None, division: str | None) -> tuple[str, ...]:
    """The publication statuses asked for; by default Available and Preview, and RDI
    when the RDI division is what is asked for (its results are never anything else)."""
    if not asked:
        if division == Division.RDI:
            return (*DEFAULT_AVAILABILITIES, Availability.RDI.value)
        return DEFAULT_AVAILABILITIES
    chosen = []
    for text in asked:
        found = availability_of(text, None)
        if found is None:
            raise QueryProblem(
                "availability",
                f"availability must be one of {', '.join(Availability)}, not {text!r}",
            )
        chosen.append(found.value)
    return tuple(dict.fromkeys(chosen))


def _scenario(text: str | None) -> str | None:
    if text is None:
        return None
    found = scenario_of(text)
    if found is None:
        raise QueryProblem("scenario", f"scenario must be cop or con, not {text!r}")
    return found.value


def _one_of(name: str, value: str, allowed: Sequence[str], besides: str = "") -> str:
    if value not in allowed:
        raise QueryProblem(
            name, f"{name} must be one of {', '.join(allowed)}{besides}, not {value!r}"
        )
    return value


def _number(
    params: ResultsParams, name: str, minimum: float = 0, positive: bool = False
) -> float | None:
    raw = params.given(name)
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


def _count(params: ResultsParams, name: str) -> int | None:
    raw = params.given(name)
    if raw is None:
        return None
    value = whole_number(raw)
    if value is None or not 1 <= value <= LARGEST_CONCURRENCY:
        raise QueryProblem(
            name, f"{name} must be a whole number from 1 to {LARGEST_CONCURRENCY:,}, not {raw!r}"
        )
    return value


def _rank_by(rank_by: str, sla: Sla, normalize: str) -> str:
    """Goodput answers a latency SLA, in output tokens/s of the system (not normalised)."""
    _one_of("rank_by", rank_by, RANKINGS)
    if rank_by == "goodput":
        if sla.ttft_p90_max_ms is None and sla.tps_per_user_min is None:
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
    return rank_by


def _day(text: str | None, name: str) -> dt.date | None:
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise QueryProblem(name, f"{name} must be a date, YYYY-MM-DD, not {text!r}") from None


def _axes(x: str | None, y: str | None) -> tuple[str, str]:
    x_axis = _one_of("x", x or DEFAULT_X, X_AXES)
    y_axis = _one_of("y", y or DEFAULT_Y, Y_AXES)
    if x_axis == y_axis:
        raise QueryProblem("y", f"x and y both show {x_axis}: choose two different axes")
    return x_axis, y_axis


def _charted(params: ResultsParams) -> tuple[int | None, tuple[int, ...]]:
    """How many curves the chart draws in full (None: all), and the ones pinned to it."""
    every = params.given("limit") == "all"
    # limit=0: only the curves pinned (the reports table's "compare on the chart").
    only_pinned = params.given("limit") == "0"
    charted = None if every or only_pinned else _count(params, "limit")
    if charted is not None and charted > MOST_CHARTED:
        raise QueryProblem("limit", f"limit must be at most {MOST_CHARTED}, not {charted}")
    pinned = []
    for raw in params.curve or ():
        curve_id = whole_number(raw.strip())
        if curve_id is None:
            raise QueryProblem("curve", f"curve must be a curve id (a whole number), not {raw!r}")
        pinned.append(curve_id)
    if only_pinned:
        if not pinned:
            raise QueryProblem(
                "limit", "limit=0 draws only the results picked with curve=: pick at least one"
            )
        return 0, tuple(dict.fromkeys(pinned))
    return (None if every else (charted or CHARTED)), tuple(dict.fromkeys(pinned))


def _preset(chosen: str | None, presets: Mapping[str, PricePreset] | None) -> PricePreset | None:
    if chosen is None:
        return None
    known = price_presets() if presets is None else presets
    if chosen not in known:
        raise QueryProblem(
            "price_preset",
            f"price_preset must be one of {', '.join(known) or '(none configured)'}, "
            f"not {chosen!r}",
        )
    return known[chosen]


def _price(
    per_accelerator: float | None,
    per_system: float | None,
    preset: PricePreset | None,
    normalize: str,
) -> Price | None:
    given = [
        name
        for name, value in (
            ("price_per_accelerator_hour", per_accelerator),
            ("price_per_system_hour", per_system),
            ("price_preset", preset),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise QueryProblem(given[-1], f"give one price, not {' and '.join(given)}")
    if not given:
        if normalize == "usd_per_mtok":
            raise QueryProblem(
                "normalize",
                "normalize=usd_per_mtok needs your price: price_per_accelerator_hour, "
                "price_per_system_hour (USD) or a price_preset",
            )
        return None
    return Price(per_accelerator_hour=per_accelerator, per_system_hour=per_system, preset=preset)
