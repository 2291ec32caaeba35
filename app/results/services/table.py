"""The one table of points (and of a ranking): the explorer's CSV, the cohort datasets'
``points.csv`` and the every-cohort CSV and Parquet tables are written from these rows,
so a figure reads the same in each."""

from __future__ import annotations

import csv
import io
from typing import Any

from app.core.views import SHOWN_PERCENTILES
from app.publishing.domain.snapshot import ReportingBasisView
from app.results.services.results import RankingRow, ResultPoint, ResultsPage

SLA_COLUMNS = (
    "workload", "rank_by", "sla_ttft_p90_max_ms", "sla_tps_per_user_min", "sla_concurrency_min",
    "sla_region", "sla_regions", "price_per_accelerator_hour", "price_per_system_hour",
    "price_preset",
)  # fmt: skip

RANKING_COLUMNS = (
    "cohort", "benchmark", "dataset", "normalize", *SLA_COLUMNS,
    "rank", "result_id", "organization", "system", "status", "peer_review_pending",
    "accelerator_model",
    "accelerator_count", "provisioned_power_kw", "division", "availability", "scenario",
    "result_name", "tags", "power_estimated", "point",
    "concurrency", "region", "throughput", "usd_per_million_tokens", "tokens_per_usd",
    "slo_attainment", "goodput_tps", "goodput_window", "system_tps",
    "system_tps_per_kw", "tps_per_user", "e2e_avg_interactivity", "ttft_p90_ms", "tpot_p90_ms",
    "cut_short", "reporting_basis", "steady_state", "runs", "cv", "derived",
)  # fmt: skip
# The summary's tail beside the official P90s, one column each.
TAIL_COLUMNS = tuple(
    f"{metric}_p{q}_ms"
    for metric in ("ttft", "tpot", "latency")
    for q in SHOWN_PERCENTILES
    if not (q == "90" and metric != "latency")  # the P90s have their own columns
)
POINT_COLUMNS = (
    "cohort", "benchmark", "dataset", "normalize", *SLA_COLUMNS,
    "result_id", "organization", "system", "division", "status", "peer_review_pending",
    "availability", "scenario", "result_name", "tags", "power_estimated", "superseded_by",
    "provisioned_power_kw", "dir",
    "concurrency", "region", "offline", "admissible", "usd_per_million_tokens",
    "slo_attainment", "goodput_tps", "goodput_requests", "goodput_window", "goodput_missing",
    "system_tps",
    "system_tps_per_kw", "tps_per_user", "e2e_avg_interactivity", "ttft_p90_ms", "tpot_p90_ms",
    "accuracy", *TAIL_COLUMNS, "length_limited_share", "cut_short", "reporting_basis",
    "steady_state", "derived",
)  # fmt: skip


def view_context(result: ResultsPage) -> dict[str, Any]:
    """What every exported row carries: which view of the results it comes from."""
    sla = result.sla
    price = result.price
    return {
        "cohort": result.cohort if not result.current else f"current ({result.cohort})",
        "benchmark": result.benchmark,
        "dataset": result.dataset,
        "normalize": result.normalize,
        "workload": result.workload.id if result.workload else None,
        "rank_by": result.rank_by,
        "sla_ttft_p90_max_ms": sla.ttft_p90_max_ms,
        "sla_tps_per_user_min": sla.tps_per_user_min,
        "sla_concurrency_min": sla.concurrency_min,
        "sla_region": sla.region,
        "sla_regions": " ".join(sla.regions),
        "price_per_accelerator_hour": price.price_per_accelerator_hour if price else None,
        "price_per_system_hour": price.price_per_system_hour if price else None,
        "price_preset": price.preset.label if price and price.preset else None,
        # Every row of a derived view says so, in a column of its own.
        "derived": result.derived_label,
    }


def csv_text(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        # Spreadsheets must not run what a submitter typed: neutralise formula prefixes.
        writer.writerow({k: _cell(row.get(k)) for k in columns})
    return out.getvalue()


def _cell(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def point_rows(result: ResultsPage) -> list[dict[str, Any]]:
    return [
        {
            "result_id": c.result_id,
            "organization": c.organization,
            "system": c.system,
            "division": c.division,
            "status": c.status,
            "peer_review_pending": c.peer_review_pending,
            "availability": c.availability,
            "scenario": c.scenario,
            "result_name": c.result_name,
            "tags": "; ".join(c.tags),
            "power_estimated": c.power_estimated,
            "superseded_by": c.superseded_by,
            "provisioned_power_kw": c.provisioned_power_kw,
            **p.model_dump(mode="json"),
            **_tail(p),
            "length_limited_share": p.finish_reasons.length_share if p.finish_reasons else None,
            "cut_short": p.cut_short,
            **_basis(p.reporting_basis),
        }
        for c in result.curves
        for p in c.points
    ]


def _basis(basis: ReportingBasisView | None) -> dict[str, Any]:
    """A point's reporting basis as two cells: in words, and whether it is steady."""
    if basis is None:
        return {"reporting_basis": "whole run", "steady_state": None}
    return {"reporting_basis": basis.label, "steady_state": basis.steady}


def ranking_row(row: RankingRow) -> dict[str, Any]:
    cells = row.model_dump(mode="json")
    return {**cells, "tags": "; ".join(row.tags), **_basis(row.reporting_basis)}


def _tail(point: ResultPoint) -> dict[str, float]:
    q = point.percentiles
    if q is None:
        return {}
    measured = {"ttft": q.ttft_ms, "tpot": q.tpot_ms, "latency": q.latency_ms}
    return {
        f"{metric}_p{key}_ms": value
        for metric, values in measured.items()
        for key, value in values.items()
    }
