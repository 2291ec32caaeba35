"""The reports table (issue 49, item 4): every result the explorer's query shows, one row
each, with the columns the reader chooses, sorted as asked, a page at a time; from the
same view, filters and answer the explorer ranks with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.core.numbers import whole_number
from app.results.domain.presets import PricePreset
from app.results.services.public import QueryProblem, result_ref
from app.results.services.query import ResultsParams, ResultsQuery, parse_results_query
from app.results.services.results import answer, rounded, shown_curves, visible_view


@dataclass(frozen=True)
class Column:
    id: str
    title: str
    kind: str  # how a figure is written (app/web/figures.py), or "text"
    numeric: bool = False


COLUMNS = {
    c.id: c
    for c in (
        Column("system", "System", "text"),
        Column("organization", "Organisation", "text"),
        Column("status", "Status", "text"),
        Column("availability", "Publication status", "text"),
        Column("division", "Division", "text"),
        Column("result_id", "Result id", "text"),
        Column("published_in", "Published in", "text"),
        Column("accelerator_model", "Accelerator", "text"),
        Column("accelerator_count", "Accelerators", "count", numeric=True),
        Column("provisioned_power_kw", "Power (kW)", "kw", numeric=True),
        Column("points", "Points", "count", numeric=True),
        Column("best_throughput", "Best admissible tok/s", "tps", numeric=True),
        Column("peak_throughput", "Peak tok/s", "tps", numeric=True),
        Column("best_per_user", "Best tok/s per user", "per_user", numeric=True),
        Column("lowest_ttft_ms", "Lowest TTFT P90 (ms)", "ms", numeric=True),
        Column("tags", "Tags", "text"),
    )
}
DEFAULT_COLUMNS = (
    "system",
    "organization",
    "status",
    "availability",
    "best_throughput",
    "peak_throughput",
    "best_per_user",
    "lowest_ttft_ms",
    "accelerator_model",
    "accelerator_count",
)
DEFAULT_SORT = "best_throughput"
PAGE_ROWS = 100


class ReportsParams(ResultsParams):
    """The reports table's parameters: the explorer's, and the table's own."""

    columns: list[str] | None = Field(
        None,
        description=f"the columns shown, in order (repeatable or comma-separated): "
        f"{', '.join(COLUMNS)}; default {', '.join(DEFAULT_COLUMNS)}",
    )
    sort: str | None = Field(None, description=f"a column id; default {DEFAULT_SORT}")
    order: str | None = Field(
        None, description="asc or desc; default: figures best first, names from A"
    )
    start: str | None = Field(
        None, description=f"the first row shown ({PAGE_ROWS} a page); default 1"
    )


def query_reports(
    session: Session, params: ReportsParams, presets: Mapping[str, PricePreset] | None = None
) -> ReportsTable:
    """The table from its parameters: the explorer's query (one parser) and its own."""
    q = parse_results_query(session, params, presets)
    columns = parse_columns(params.columns)
    sort, descending = parse_sort(params.given("sort"), params.given("order"))
    raw_start = params.given("start")
    start = whole_number(raw_start) if raw_start is not None else 1
    if start is None:
        raise QueryProblem("start", f"start must be a whole number from 1, not {raw_start!r}")
    return reports_table(session, q, columns, sort, descending, start)


class ReportRow(BaseModel):
    curve: int = Field(description="the published curve's id (`curve=` on the explorer)")
    ref: str = Field(description="its report: /results/{ref}")
    values: dict[str, Any] = Field(
        description="column id → value (every column, not only those shown)"
    )


class ReportsTable(BaseModel):
    benchmark: str | None
    dataset: str | None
    columns: list[str] = Field(description="the columns shown, in order")
    all_columns: dict[str, str] = Field(description="every column: id → title")
    kinds: dict[str, str] = Field(description="column id → how its figures are written")
    sort: str
    descending: bool
    total: int = Field(description="the results the view shows")
    start: int = Field(description="the first row's place (1-based)")
    rows: list[ReportRow]


def parse_columns(raw: Sequence[str] | None) -> tuple[str, ...]:
    """The columns asked for (`columns=a,b` or repeated), each known; default a useful set."""
    asked = [c.strip() for text in raw or () for c in text.split(",") if c.strip()]
    if not asked:
        return DEFAULT_COLUMNS
    unknown = [c for c in asked if c not in COLUMNS]
    if unknown:
        raise QueryProblem("columns", f"unknown column {unknown[0]!r}; use {', '.join(COLUMNS)}")
    return tuple(dict.fromkeys(asked))


def parse_sort(raw: str | None, order: str | None) -> tuple[str, bool]:
    sort = raw or DEFAULT_SORT
    if sort not in COLUMNS:
        raise QueryProblem("sort", f"sort must be one of {', '.join(COLUMNS)}, not {sort!r}")
    if order not in (None, "", "asc", "desc"):
        raise QueryProblem("order", f"order must be asc or desc, not {order!r}")
    # Figures read best highest (TTFT lowest); names from A.
    default_descending = COLUMNS[sort].numeric and sort != "lowest_ttft_ms"
    return sort, default_descending if not order else order == "desc"


def reports_table(
    session: Session,
    q: ResultsQuery,
    columns: tuple[str, ...] = DEFAULT_COLUMNS,
    sort: str = DEFAULT_SORT,
    descending: bool = True,
    start: int = 1,
) -> ReportsTable:
    view = visible_view(session, q.cohort or None)
    benchmark, dataset, shown = shown_curves(view, q)
    a = answer(session, view, shown, q)
    table = view.table
    rows: list[ReportRow] = []
    for n in shown:
        curve = view.curves[n]
        first, end = int(view.first_row[n]), int(view.first_row[n + 1])
        online = ~table.dedicated[first:end]
        ys = a.y[first:end][online]
        best = int(a.best[n])
        values: dict[str, Any] = {
            "system": curve.system_name,
            "organization": curve.organization,
            "status": curve.status,
            "availability": curve.availability,
            "division": curve.division,
            "result_id": curve.result_id,
            "published_in": curve.published_in,
            "accelerator_model": curve.accelerator_model,
            "accelerator_count": curve.accelerator_count,
            "provisioned_power_kw": curve.provisioned_power_kw,
            "points": end - first,
            "best_throughput": rounded(float(a.y[best]), 3) if best >= 0 else None,
            "peak_throughput": _extreme(ys, np.nanmax),
            "best_per_user": _extreme(table.per_user[first:end][online], np.nanmax),
            "lowest_ttft_ms": _extreme(table.ttft_p90_ms[first:end][online], np.nanmin),
            "tags": ", ".join(curve.tags),
        }
        rows.append(
            ReportRow(
                curve=curve.id,
                ref=result_ref(curve.result_id, curve.id),
                values=values,
            )
        )
    rows = sorted_rows(rows, sort, descending)
    if start < 1 or (rows and start > len(rows)):
        raise QueryProblem("start", f"start must be from 1 to {max(len(rows), 1)}, not {start}")
    return ReportsTable(
        benchmark=benchmark,
        dataset=dataset,
        columns=list(columns),
        all_columns={c.id: c.title for c in COLUMNS.values()},
        kinds={c.id: c.kind for c in COLUMNS.values()},
        sort=sort,
        descending=descending,
        total=len(rows),
        start=start,
        rows=rows[start - 1 : start - 1 + PAGE_ROWS],
    )


def sorted_rows(rows: list[ReportRow], sort: str, descending: bool) -> list[ReportRow]:
    """By *sort*, rows without a value last either way; ties by organisation, system."""
    by_name = sorted(
        rows, key=lambda r: (r.values["organization"].lower(), r.values["system"].lower())
    )
    present = [r for r in by_name if r.values[sort] not in (None, "")]
    missing = [r for r in by_name if r.values[sort] in (None, "")]

    def key(row: ReportRow) -> Any:
        value = row.values[sort]
        return value.lower() if isinstance(value, str) else value

    return sorted(present, key=key, reverse=descending) + missing


def _extreme(values: Any, pick: Any) -> float | None:
    finite = values[~np.isnan(values)]
    return round(float(pick(finite)), 3) if finite.size else None
