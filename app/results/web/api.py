"""/api/v1/benchmarks, /api/v1/cohorts (and each cohort's record and export) and
/api/v1/results: what buyers query."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.web.security import PrincipalDep, SignedInDep
from app.core.cohorts import Cohort
from app.core.refusals import Kind, Refused
from app.core.views import Listing
from app.publishing.services.cohorts import PublicationView
from app.results.services.accuracy import AccuracyParams, AccuracyView, accuracy_view
from app.results.services.agentic import AgenticModels, agentic_models
from app.results.services.compare import (
    COMPARE_COLUMNS,
    CompareParams,
    Comparison,
    compare_query,
)
from app.results.services.dataset import cohort_dataset, every_point
from app.results.services.history import History, system_history
from app.results.services.plan import Plan, PlanParams, capacity_plan
from app.results.services.public import (
    CohortView,
    QueryProblem,
    cohort_versions,
    cohort_was_released,
    list_cohorts,
)
from app.results.services.query import ResultsParams, parse_results_query
from app.results.services.report import ResultReport, result_report
from app.results.services.reports import ReportsParams, ReportsTable, query_reports
from app.results.services.results import (
    BenchmarkView,
    PresetView,
    ResultsPage,
    list_benchmarks,
    query_results,
)
from app.results.services.saved_views import (
    SavedViewOut,
    delete_view,
    my_views,
    opened_view,
    save_view,
)
from app.results.services.table import (
    POINT_COLUMNS,
    RANKING_COLUMNS,
    csv_text,
    point_rows,
    ranking_row,
    view_context,
)
from app.results.services.tracker import PreviewTracker, preview_tracker
from app.results.web.deps import PresetsDep
from app.settings import review_clock
from app.web.api_errors import ErrorBody, answered, attempt, refused
from app.web.deps import NowDep, SessionDep, SettingsDep
from app.web.files import open_file_response

router = APIRouter(prefix="/api/v1", tags=["results"])

SLA_NAMED = {"ttft_p90_max_ms", "tps_per_user_min", "concurrency_min", "region"}


def export_name(result: ResultsPage, export: str) -> str:
    """A file name that tells one export from another: view, normalisation and SLA."""
    parts = [
        result.benchmark or "results",
        result.dataset or "",
        result.cohort if not result.current else "current",
        result.normalize,
        result.workload.id if result.workload else "",
        "goodput" if result.rank_by == "goodput" else "",
        *(f"{k}-{v:g}" if isinstance(v, float) else f"{k}-{v}"
          for k, v in result.sla.model_dump(include=SLA_NAMED).items() if v is not None),
        *(f"{k}-{v:g}" for k, v in (result.price.model_dump(exclude={"preset"})
                                     if result.price else {}).items() if v is not None),
        f"price_preset-{result.price.preset.id}" if result.price and result.price.preset else "",
        export,
    ]  # fmt: skip
    # The names come from the query: only what is safe in a header stays.
    return re.sub(r"[^A-Za-z0-9._-]", "_", "-".join(p for p in parts if p)) + ".csv"


@router.get("/preview-tracker", response_model=PreviewTracker)
def read_preview_tracker(session: SessionDep, settings: SettingsDep, now: NowDep) -> PreviewTracker:
    """Every Preview result the record has shown (rules §11.10): its "Available by" date,
    the days its window has left, its extension, and how it ended (shipped, removed,
    withdrawn, invalidated), the soonest to expire first."""
    return preview_tracker(session, settings, review_clock(settings).local_date(now))


@router.get("/cohorts", response_model=Listing[CohortView])
def read_cohorts(session: SessionDep) -> Listing[CohortView]:
    """The cohorts the chair released, newest first (when, and the versions each gained)."""
    return Listing(data=list_cohorts(session))


class CohortRecord(BaseModel):
    cohort: str
    links: dict[str, str]
    data: list[PublicationView]


def _released_or_404(session: Session, cohort_id: str) -> None:
    """A path's cohort: 422 when it is no cohort id, 404 until the chair released it."""
    if Cohort.parse(cohort_id) is None:
        raise Refused(
            "bad-cohort",
            f"{cohort_id!r} is not a cohort id (YYYY-MM-C0/C1)",
            Kind.INVALID,
            field="cohort_id",
        )
    if not cohort_was_released(session, cohort_id):
        raise Refused(
            "not-found",
            f"cohort {cohort_id!r} has not been published",
            Kind.NOT_FOUND,
            field="cohort_id",
        )


@router.get("/cohorts/{cohort_id}", response_model=CohortRecord, tags=["cohorts"])
def read_cohort(cohort_id: str, session: SessionDep) -> CohortRecord:
    """What was published in a cohort (public): the versions its record gained, each with
    the points it still shows, and tags of withdrawn/invalidated results."""
    _released_or_404(session, cohort_id)
    return CohortRecord(
        cohort=cohort_id,
        links={
            "dataset": f"/api/v1/cohorts/{cohort_id}/dataset",
            "export": f"/api/v1/cohorts/{cohort_id}/export",
        },  # fmt: skip
        data=cohort_versions(session, cohort_id),
    )


DATASET: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/gzip": {}}},
    404: {"description": "No such released cohort", "model": ErrorBody},
}


@router.get("/cohorts/{cohort_id}/dataset", response_class=FileResponse, responses=DATASET,
            tags=["cohorts"])  # fmt: skip
def cohort_dataset_file(
    cohort_id: str, session: SessionDep, settings: SettingsDep
) -> StreamingResponse:
    """The cohort's public results as a dataset in the official bundle layout (the
    official visualiser opens it): a finalized result's bundle, a provisional result's
    result files, ``points.csv``, and at its root ``manifest.json`` (every result as the
    record shows it, the SHA-256 of every file, the cohort's ledger entry) with its
    Ed25519 signature ``manifest.json.sig``. Check it with ``endpoints-portal verify``."""
    _released_or_404(session, cohort_id)
    built = cohort_dataset(session, settings, cohort_id)
    return open_file_response(built.file, "application/gzip", built.name)


@router.get("/cohorts/{cohort_id}/export", response_class=FileResponse, responses=DATASET,
            tags=["cohorts"])  # fmt: skip
def export_cohort(cohort_id: str, session: SessionDep, settings: SettingsDep) -> StreamingResponse:
    """The cohort's dataset, as ``/dataset`` answers (this address is kept for the clients
    that know it)."""
    return cohort_dataset_file(cohort_id, session, settings)


TABLES: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/csv": {}, "application/vnd.apache.parquet": {}}}
}


@router.get("/points.{fmt}", response_class=FileResponse, responses=TABLES, tags=["cohorts"])
def every_published_point(
    fmt: Literal["csv", "parquet"], session: SessionDep, settings: SettingsDep
) -> StreamingResponse:
    """Every point of every released cohort's record, a row per cohort that shows it
    (with its result id, status, tags and the cohort), as CSV or Parquet: the columns of
    the explorer's CSV."""
    built = every_point(session, settings, fmt)
    media = "text/csv; charset=utf-8" if fmt == "csv" else "application/vnd.apache.parquet"
    return open_file_response(built.file, media, built.name)


@router.get(
    "/benchmarks",
    response_model=Listing[BenchmarkView],
    responses={422: {"model": ErrorBody}},
)
def read_benchmarks(
    session: SessionDep, cohort: str | None = None
) -> Listing[BenchmarkView] | JSONResponse:
    """Benchmarks (model + dataset) with public curves in a cohort (default: the latest)."""
    try:
        return Listing(data=list_benchmarks(session, cohort))
    except QueryProblem as problem:
        return refused(problem)


@router.get("/price-presets", response_model=Listing[PresetView], tags=["results"])
def read_price_presets(presets: PresetsDep) -> Listing[PresetView]:
    """The price lists a buyer may start from (`price_preset=` on the results and the
    plan): USD per accelerator-hour per accelerator model, each with its source and date.
    Neither MLPerf figures nor quotes; the operator keeps the list."""
    shown = [PresetView.of(p) for p in presets.values()]
    return Listing(data=shown)


@router.get(
    "/results",
    response_model=ResultsPage,
    responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}}},
)
def read_results(
    session: SessionDep,
    presets: PresetsDep,
    params: Annotated[ResultsParams, Query()],
    format: Literal["json", "csv"] = "json",
    export: Literal["ranking", "points"] = "ranking",
) -> Any:
    """Curves, points (each with its status and SLA admissibility) and the admissible
    ranking: per system, the best point that meets the SLA. The parameters are parsed by
    the same code as the results page's (a refusal names the parameter in `field`)."""
    try:
        query = parse_results_query(session, params, presets)
        if format == "csv":
            query = replace(query, limit=None)  # an export holds every system
        result = query_results(session, query)
    except QueryProblem as problem:
        return refused(problem)
    if format == "csv":
        rows = (
            [ranking_row(r) for r in result.ranking] if export == "ranking" else point_rows(result)
        )
        columns = RANKING_COLUMNS if export == "ranking" else POINT_COLUMNS
        context = view_context(result)
        name = export_name(result, export)
        return Response(
            csv_text([{**context, **row} for row in rows], columns),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )
    # The payload is large: pydantic writes it straight to bytes, without validating the
    # answer again on its way out.
    return Response(result.model_dump_json(), media_type="application/json")


@router.get(
    "/results/{ref}",
    response_model=ResultReport,
    responses={404: {"model": ErrorBody}, 422: {"model": ErrorBody}},
)
def read_result_report(
    ref: str,
    session: SessionDep,
    settings: SettingsDep,
    presets: PresetsDep,
    who: PrincipalDep,
    now: NowDep,
    params: Annotated[ResultsParams, Query()],
) -> ResultReport | JSONResponse:
    """One result's report: its statement, cards, curve and points (every official
    figure, tags and status), its neighbours in the view the parameters describe, and a
    citation. *ref* is the result id (rules §9.7), or the curve id of an unverified one."""
    try:
        return result_report(
            session, settings, who, ref, parse_results_query(session, params, presets), now.date()
        )
    except QueryProblem as problem:
        return refused(problem)


@router.get("/reports", response_model=ReportsTable, responses={422: {"model": ErrorBody}})
def read_reports(
    session: SessionDep, presets: PresetsDep, params: Annotated[ReportsParams, Query()]
) -> ReportsTable | JSONResponse:
    """Every result the explorer's query shows, a row each (100 a page from
    `start`), sorted by any column; each row carries every column's value and its report's
    reference."""
    try:
        return query_reports(session, params, presets)
    except QueryProblem as problem:
        return refused(problem)


class SavedViewIn(BaseModel):
    name: str = Field(description="what to call it (at most 100 characters)")
    query: str = Field(
        description="the explorer's query, as its address holds it (what GET /api/v1/results "
        "takes); checked as the explorer checks it"
    )


@router.post(
    "/saved-views",
    status_code=201,
    response_model=SavedViewOut,
    responses={401: {"model": ErrorBody}, 409: {"model": ErrorBody}, 422: {"model": ErrorBody}},
)
def create_saved_view(
    body: SavedViewIn, session: SessionDep, who: SignedInDep
) -> SavedViewOut | JSONResponse:
    """Name a view of the results and keep it; its link opens it for anyone."""
    return answered(session, lambda: save_view(session, who, body.name, body.query))


@router.get("/saved-views", response_model=Listing[SavedViewOut])
def list_saved_views(session: SessionDep, who: SignedInDep) -> Listing[SavedViewOut]:
    """The caller's saved views, newest first."""
    return Listing(data=my_views(session, who))


@router.get(
    "/saved-views/{view_id}", response_model=SavedViewOut, responses={404: {"model": ErrorBody}}
)
def read_saved_view(view_id: str, session: SessionDep) -> SavedViewOut | JSONResponse:
    """A saved view, as anyone given its link opens it."""
    try:
        return opened_view(session, view_id)
    except Refused as problem:
        return refused(problem)


@router.delete(
    "/saved-views/{view_id}",
    status_code=204,
    responses={403: {"model": ErrorBody}, 404: {"model": ErrorBody}},
)
def delete_saved_view(view_id: str, session: SessionDep, who: SignedInDep) -> Response:
    """Delete one of the caller's saved views (only its owner may)."""
    failed = attempt(session, lambda: delete_view(session, who, view_id))
    return failed or Response(status_code=204)


@router.get("/plan", response_model=Plan, responses={422: {"model": ErrorBody}})
def read_plan(
    session: SessionDep, presets: PresetsDep, params: Annotated[PlanParams, Query()]
) -> Plan | JSONResponse:
    """How many systems each published curve needs to hold `users` concurrent users (on
    the measured point that meets the SLA with the highest concurrency), or to answer
    `requests_per_s` of `output_tokens_per_request` each (on the one with the highest
    throughput), ranked by the fewest accelerators (the lowest $/hour with a price). Every figure is
    derived, not an MLPerf figure. Takes the results explorer's parameters (filters,
    region, concurrency_min too), parsed by the same code."""
    try:
        return capacity_plan(session, params, presets)
    except QueryProblem as problem:
        return refused(problem)


@router.get("/compare", response_model=Comparison)
def read_comparison(
    session: SessionDep,
    settings: SettingsDep,
    who: PrincipalDep,
    params: Annotated[CompareParams, Query()],
    format: Annotated[
        Literal["json", "csv"],
        Query(
            description="csv: the table, a row per concurrency and submission, with the "
            "deltas against the baseline and each point's runs"
        ),  # fmt: skip
    ] = "json",
) -> Comparison | Response:
    """Published results' curves of one benchmark side by side, as the results show them
    now: their points at each concurrency and every disclosure (system description,
    software, counts, power, precision) whose value differs, where the visitor may see
    them (withheld during peer review, rules §11.9). A submission that is not on the
    curves (unknown, withdrawn, rejected) is refused by name."""
    try:
        comparison = compare_query(session, settings, who, params)
    except QueryProblem as problem:
        return refused(problem)
    if format == "csv":
        name = re.sub(r"[^A-Za-z0-9._-]", "_", f"compare-{comparison.benchmark}") + ".csv"
        return Response(
            csv_text(comparison.export_rows(), COMPARE_COLUMNS),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )
    return comparison


@router.get("/history", response_model=History)
def read_history(
    session: SessionDep,
    settings: SettingsDep,
    who: PrincipalDep,
    organization: Annotated[str, Query(description="as the results name it")],
    system: Annotated[str, Query(description="the system's name, as the results name it")],
    benchmark: Annotated[str, Query(description="benchmark model, e.g. llama3_1-8b")],
) -> History | Response:
    """A system's published curves of one benchmark across the cohorts, oldest first, each
    with its result id and status and the disclosures it changed (where the visitor may
    see them), as the record stands now: a point invalidated since is gone from every
    entry, and a result withdrawn or invalidated keeps its entries without points."""
    try:
        return system_history(session, settings, who, organization, system, benchmark)
    except QueryProblem as problem:
        return refused(problem)


@router.get("/agentic", response_model=AgenticModels)
def read_agentic_models(
    session: SessionDep,
    organization: Annotated[str, Query(description="as the results name it")],
    system: Annotated[str | None, Query(description="one system; default every one")] = None,
    cohort: Annotated[str | None, Query(description="default: the current results")] = None,
    status: Annotated[
        list[str] | None,
        Query(description="verified, provisional, unverified (repeated); as /api/v1/results"),
    ] = None,
) -> AgenticModels | Response:
    """One organisation's (or system's) curves for every agentic model: the agentic
    benchmarks run identical traffic, so they share one chart (x = e2e interactivity)."""
    try:
        return agentic_models(session, organization, system, cohort, status or ())
    except QueryProblem as problem:
        return refused(problem)


@router.get("/accuracy", response_model=AccuracyView, responses={422: {"model": ErrorBody}})
def read_accuracy(
    session: SessionDep, params: Annotated[AccuracyParams, Query()]
) -> AccuracyView | JSONResponse:
    """Accuracy at speed: each published point of a benchmark that carries an accuracy
    run, with each entry of its accuracy file and each thresholded metric as the official
    gate compared it (sample-weighted mean, on the threshold's scale), beside its
    throughput; `admissible` marks the points that meet the SLA. Takes the results
    explorer's parameters, parsed by the same code."""
    try:
        return accuracy_view(session, params)
    except QueryProblem as problem:
        return refused(problem)
