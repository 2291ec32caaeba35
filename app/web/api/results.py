"""/api/v1/benchmarks, /api/v1/cohorts and /api/v1/results: what buyers query."""

from __future__ import annotations

import csv
import io
import re
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response

from app.domain.sla import NORMALISATIONS, Sla
from app.services.results import (
    DEFAULT_STATUSES,
    STATUSES,
    ResultsQuery,
    list_benchmarks,
    list_cohorts,
    query_results,
)

from ..deps import SessionDep

router = APIRouter(prefix="/api/v1", tags=["results"])

REGIONS = ("low_latency", "low_concurrency", "med_concurrency", "high_concurrency", "margin")
RANKING_COLUMNS = (
    "rank", "result_id", "organization", "system", "status", "accelerator_model",
    "accelerator_count", "division", "availability", "point", "concurrency", "region",
    "throughput", "system_tps", "system_tps_per_kw", "tps_per_user", "e2e_avg_interactivity",
    "ttft_p90_ms", "tpot_p90_ms",
)  # fmt: skip
POINT_COLUMNS = (
    "result_id", "organization", "system", "division", "status", "dir", "concurrency",
    "region", "offline", "admissible", "system_tps", "system_tps_per_kw", "tps_per_user",
    "e2e_avg_interactivity", "ttft_p90_ms", "tpot_p90_ms", "accuracy",
)  # fmt: skip


def build_query(
    benchmark: str | None,
    cohort: str | None,
    status: list[str] | None,
    ttft_p90_max_ms: float | None,
    tps_per_user_min: float | None,
    concurrency_min: int | None,
    region: str | None,
    division: str | None,
    availability: str | None,
    organization: str | None,
    accelerator: str | None,
    accelerator_count: int | None,
    normalize: str,
) -> ResultsQuery:
    """One parser for the page and the API, with errors that say what is wrong."""
    statuses = tuple(status) if status else DEFAULT_STATUSES
    bad = [s for s in statuses if s not in STATUSES]
    if bad:
        raise HTTPException(422, detail=f"unknown status {bad[0]!r}; use {', '.join(STATUSES)}")
    if normalize not in NORMALISATIONS:
        raise HTTPException(
            422, detail=f"normalize must be one of {', '.join(NORMALISATIONS)}, not {normalize!r}"
        )
    if region and region not in REGIONS:
        raise HTTPException(422, detail=f"region must be one of {', '.join(REGIONS)}")
    return ResultsQuery(
        benchmark=benchmark or None,
        cohort=cohort or None,
        statuses=statuses,
        sla=Sla(ttft_p90_max_ms, tps_per_user_min, concurrency_min, region or None),
        division=division or None,
        availability=availability or None,
        organization=organization or None,
        accelerator=accelerator or None,
        accelerator_count=accelerator_count,
        normalize=normalize,
    )


def _csv(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
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


def point_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "result_id": c["result_id"],
            "organization": c["organization"],
            "system": c["system"],
            "division": c["division"],
            "status": c["status"],
            **p,
        }
        for c in result["curves"]
        for p in c["points"]
    ]


@router.get("/cohorts")
def read_cohorts(session: SessionDep) -> dict[str, Any]:
    """The cohorts the chair released, newest first (when, and the versions each gained)."""
    return {"data": list_cohorts(session)}


@router.get("/benchmarks")
def read_benchmarks(session: SessionDep, cohort: str | None = None) -> dict[str, Any]:
    """Benchmarks (model + dataset) with public curves in a cohort (default: the latest)."""
    return {"data": list_benchmarks(session, cohort)}


@router.get("/results")
def read_results(
    session: SessionDep,
    benchmark: Annotated[str | None, Query(description="benchmark model, e.g. llama3_1-8b")] = None,
    cohort: Annotated[str | None, Query(description="YYYY-MM-C0/C1; default the latest")] = None,
    status: Annotated[
        list[str] | None, Query(description="repeatable; default verified and provisional")
    ] = None,
    ttft_p90_max_ms: Annotated[float | None, Query(ge=0)] = None,
    tps_per_user_min: Annotated[
        float | None, Query(ge=0, description="or e2e interactivity (agentic)")
    ] = None,
    concurrency_min: Annotated[int | None, Query(ge=1, le=2**53)] = None,
    region: str | None = None,
    division: str | None = None,
    availability: str | None = None,
    organization: str | None = None,
    accelerator: Annotated[
        str | None, Query(description="matches part of the accelerator name")
    ] = None,
    accelerator_count: Annotated[int | None, Query(ge=1, le=2**53)] = None,
    normalize: Annotated[
        str, Query(description="system, kw (per provisioned kW) or accelerator")
    ] = "system",
    format: Literal["json", "csv"] = "json",
    export: Literal["ranking", "points"] = "ranking",
) -> Any:
    """Curves, points (each with its status and SLA admissibility) and the admissible
    ranking: per system, the best point that meets the SLA."""
    query = build_query(
        benchmark,
        cohort,
        status,
        ttft_p90_max_ms,
        tps_per_user_min,
        concurrency_min,
        region,
        division,
        availability,
        organization,
        accelerator,
        accelerator_count,
        normalize,
    )
    result = query_results(session, query)
    if format == "csv":
        rows = result["ranking"] if export == "ranking" else point_rows(result)
        columns = RANKING_COLUMNS if export == "ranking" else POINT_COLUMNS
        name = f"{result['benchmark'] or 'results'}-{result['cohort'] or 'none'}-{export}.csv"
        # The names come from the query: only what is safe in a header stays.
        name = re.sub(r"[^A-Za-z0-9._-]", "_", name)
        return Response(
            _csv(rows, columns),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )
    # The payload is large: orjson straight to bytes, without FastAPI's generic encoder.
    return Response(orjson.dumps(result), media_type="application/json")
