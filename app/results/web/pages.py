"""The results explorer's page."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode

from fastapi import Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.datastructures import QueryParams

from app.accounts.services.accounts import Principal
from app.accounts.web.security import (
    PrincipalDep,
    act_from_form,
    page_router,
)
from app.core.refusals import Refused
from app.core.regions import REGIONS
from app.results.domain.presets import PricePreset
from app.results.domain.workloads import workloads
from app.results.services.accuracy import AccuracyParams, accuracy_view
from app.results.services.agentic import agentic_models
from app.results.services.compare import CompareParams, compare_query
from app.results.services.feed import record_events
from app.results.services.history import system_history
from app.results.services.home import home
from app.results.services.plan import PlanParams, capacity_plan
from app.results.services.public import (
    STATUSES,
    QueryProblem,
    list_cohorts,
)
from app.results.services.query import (
    LISTED,
    ResultsParams,
    ResultsQuery,
    explorer_pairs,
    parse_results_query,
)
from app.results.services.report import MESSAGING_GUIDELINES, result_report, view_citation
from app.results.services.reports import ReportsParams, query_reports
from app.results.services.results import (
    ResultsPage,
    default_benchmark,
    list_benchmarks,
    query_results,
)
from app.results.services.saved_views import delete_view, my_views, opened_view, save_view
from app.results.services.tracker import preview_tracker
from app.results.web import first_views
from app.results.web.atom import atom_feed
from app.results.web.deps import PresetsDep
from app.settings import Settings, review_clock
from app.web.api_errors import status_of
from app.web.deps import NowDep, SessionDep, SettingsDep
from app.web.templating import templates

router = page_router()
# The charts' first views, drawn in the page from the answer it embeds for Plotly.
templates.env.globals.update(
    pareto_svg=first_views.pareto,
    curves_svg=first_views.step_curves,
    report_svg=first_views.report_pareto,
    MESSAGING_GUIDELINES=MESSAGING_GUIDELINES,
)


@router.get("/", response_class=HTMLResponse)
def home_page(request: Request, session: SessionDep) -> Response:
    """For the people the results are for: the latest cohort per benchmark, and how to
    read it in four steps."""
    return templates.TemplateResponse(
        request,
        "results/home.html",
        {"home": home(session), "workloads": list(workloads().values())},
    )


@router.get("/results", response_class=HTMLResponse)
def results_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    presets: PresetsDep,
    who: PrincipalDep,
    now: NowDep,
) -> Response:
    params = request.query_params
    problem: QueryProblem | None = None
    asked = ResultsParams.of(params)
    try:
        result = query_results(session, parse_results_query(session, asked, presets))
    except QueryProblem as refused:
        # The form again with what was typed and what is wrong; the view beneath is the
        # visitor's other choices (each refused field left out), never a reset.
        problem = refused
        result = _without_refused(session, asked, refused, presets)
    return templates.TemplateResponse(
        request,
        "results/results.html",
        {
            "r": result,
            "problem": problem,
            "cohorts": list_cohorts(session),
            "statuses": STATUSES,
            "regions": REGIONS,
            "workloads": list(workloads().values()),
            "params": params,
            # The API takes the same parameters; empty ones are left out.
            "api_query": _query(params),
            # The same without the list's page, for the links that page it.
            "unpaged_query": _query(params, "more_from"),
            # The view without its choice of drawn curves: the chips and the table.
            "view_query": _query(params, "curve", "limit", "more_from"),
            # The same view's curves, for the Offline view's links to them.
            "pareto_query": _query(params, "view", "more_from"),
            "saved_views": my_views(session, who) if who is not None else [],
            # Links that leave the portal are on its public address, never the Host header.
            "citation": view_citation(result, _public_address(settings, request), now.date()),
            "public_url": settings.public_url.rstrip("/"),
            "r_listed": LISTED,
            "presets": list(presets.values()),
            # The cost column the other way up (the API serves both figures).
            "tokens_per_usd": params.get("cost_as") == "tokens_per_usd",
        },
        status_code=status_of(problem) if problem else 200,
    )


def _without_refused(
    session: Session,
    params: ResultsParams,
    refused: QueryProblem,
    presets: dict[str, PricePreset],
) -> ResultsPage:
    dropped = {refused.field}
    for _ in range(len(ResultsParams.model_fields) + 1):
        kept = params.without(dropped)
        try:
            return query_results(session, parse_results_query(session, kept, presets))
        except QueryProblem as again:
            if again.field in dropped:
                break
            dropped.add(again.field)
    return query_results(session, ResultsQuery())


@router.get("/feeds/results.atom")
def results_feed(
    request: Request, session: SessionDep, settings: SettingsDep, now: NowDep
) -> Response:
    """The record's events (cohorts released, results withdrawn, invalidated or removed)
    as Atom; ``?benchmark=`` for one benchmark's."""
    benchmark = request.query_params.get("benchmark") or None
    try:
        events = record_events(session, benchmark)
    except QueryProblem as problem:
        raise HTTPException(404, detail=problem.message) from problem
    path = "/feeds/results.atom" + (f"?{urlencode({'benchmark': benchmark})}" if benchmark else "")
    title = "MLPerf Endpoints results" + (f": {benchmark}" if benchmark else "")
    body = atom_feed(events, settings.public_url, path, title, now)
    return Response(body, media_type="application/atom+xml; charset=utf-8")


@router.get("/views/{view_id}")
def open_saved_view(view_id: str, request: Request, session: SessionDep) -> Response:
    """A saved view's link: the explorer at the view's address, for anyone."""
    try:
        view = opened_view(session, view_id)
    except Refused as refused:
        raise HTTPException(status_of(refused), detail=refused.message) from refused
    return RedirectResponse(f"{_explorer(request)}?{view.query}", status_code=303)


@router.post("/views")
def save_view_from_page(
    request: Request,
    session: SessionDep,
    name: str = Form("", max_length=200),
    query: str = Form("", max_length=5000),
    csrf_token: str = Form(""),
) -> Response:
    """The explorer's "save this view": kept under the name given, listed beside it."""
    return _view_form(
        request, session, csrf_token, query, lambda who: save_view(session, who, name, query)
    )


@router.post("/views/{view_id}/delete")
def delete_view_from_page(
    view_id: str,
    request: Request,
    session: SessionDep,
    query: str = Form("", max_length=5000),
    csrf_token: str = Form(""),
) -> Response:
    return _view_form(
        request, session, csrf_token, query, lambda who: delete_view(session, who, view_id)
    )


def _view_form(
    request: Request,
    session: Session,
    csrf_token: str,
    query: str,
    work: Callable[[Principal], object],
) -> Response:
    """A saved-views form, then back to the explorer's view it was sent from."""
    act_from_form(request, session, csrf_token, work, "keep views of the results")
    return RedirectResponse(f"{_explorer(request)}?{_view_of(query)}#saved-views", status_code=303)


def _query(params: QueryParams, *left_out: str) -> str:
    """The address's parameters that are given (empty ones are left out), less *left_out*."""
    return urlencode([(k, v) for k, v in params.multi_items() if v.strip() and k not in left_out])


def _public_address(settings: Settings, request: Request) -> str:
    """The explorer's view on the portal's public address (its own parameters only)."""
    query = _view_of(request.url.query)
    return settings.public_link(_explorer(request) + (f"?{query}" if query else ""))


def _explorer(request: Request) -> str:
    return request.url_for("results_page").path


def _view_of(query: str) -> str:
    """The explorer's own parameters of a form's *query*: where it goes back to."""
    return urlencode(explorer_pairs(parse_qsl(query)))


@router.get("/reports", response_class=HTMLResponse)
def reports_page(request: Request, session: SessionDep, presets: PresetsDep) -> Response:
    """Every result of the explorer's view in a table: columns chosen, sorted, selected
    for the chart (the same computation as ``GET /api/v1/reports``)."""
    params = request.query_params
    try:
        table = query_reports(session, ReportsParams.of(params), presets)
        problem = None
    except QueryProblem as refused:
        table, problem = None, refused
    # The explorer's own parameters: the view the table lists, and the chart it leads to.
    view_items = explorer_pairs(params.multi_items(), "curve", "limit", "more_from")
    return templates.TemplateResponse(
        request,
        "results/reports.html",
        {
            "t": table,
            "problem": problem,
            "params": params,
            "view_items": view_items,
            "view_query": urlencode(view_items),
            "table_query": _query(params, "sort", "order", "start"),
        },
        status_code=status_of(problem) if problem else 200,
    )


@router.get("/results/{ref}", response_class=HTMLResponse)
def result_report_page(
    ref: str,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    presets: PresetsDep,
    who: PrincipalDep,
    now: NowDep,
) -> Response:
    """One result's report (the same computation as ``GET /api/v1/results/{ref}``); the
    explorer's parameters in the address decide its neighbours and normalisation."""
    params = request.query_params
    try:
        query = parse_results_query(session, ResultsParams.of(params), presets)
        report = result_report(session, settings, who, ref, query, now.date())
    except QueryProblem as problem:
        return templates.TemplateResponse(
            request,
            "results/report.html",
            {"report": None, "problem": problem},
            status_code=status_of(problem),
        )
    # The neighbours' links keep the view they are neighbours in.
    query_text = _query(params)
    return templates.TemplateResponse(
        request, "results/report.html", {"report": report, "problem": None, "query": query_text}
    )


@router.get("/compare", response_class=HTMLResponse)
def compare_page(
    request: Request, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> Response:
    """2 to 4 submissions side by side: one chart, the points, what their disclosures say
    differently (the same computation as ``GET /api/v1/compare``)."""
    params = request.query_params
    try:
        comparison = compare_query(session, settings, who, CompareParams.of(params))
    except QueryProblem as problem:
        return templates.TemplateResponse(
            request,
            "results/compare.html",
            {"c": None, "problem": problem, "params": params},
            status_code=status_of(problem),
        )
    return templates.TemplateResponse(
        request, "results/compare.html", {"c": comparison, "problem": None}
    )


@router.get("/history", response_class=HTMLResponse)
def history_page(
    request: Request, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> Response:
    """A system's curves across the cohorts (the same computation as GET /api/v1/history)."""
    params = request.query_params
    try:
        history = system_history(
            session,
            settings,
            who,
            params.get("organization", ""),
            params.get("system", ""),
            params.get("benchmark", ""),
        )
    except QueryProblem as problem:
        return templates.TemplateResponse(
            request,
            "results/history.html",
            {"h": None, "problem": problem, "params": params},
            status_code=status_of(problem),
        )
    return templates.TemplateResponse(
        request, "results/history.html", {"h": history, "problem": None}
    )


@router.get("/preview-tracker", response_class=HTMLResponse)
def preview_tracker_page(
    request: Request, session: SessionDep, settings: SettingsDep, now: NowDep
) -> Response:
    """Which Preview results are due, and did they ship (rules §11.10): the same answer
    as GET /api/v1/preview-tracker."""
    today = review_clock(settings).local_date(now)
    return templates.TemplateResponse(
        request, "results/preview_tracker.html", {"t": preview_tracker(session, settings, today)}
    )


@router.get("/plan", response_class=HTMLResponse)
def plan_page(request: Request, session: SessionDep, presets: PresetsDep) -> Response:
    """How many systems hold the buyer's load at their SLA (GET /api/v1/plan): the form,
    and once it names a load, the sizing; every input is in the address."""
    params = request.query_params
    problem: QueryProblem | None = None
    plan = None
    if {"users", "requests_per_s"} & set(params):  # a load was asked about
        try:
            plan = capacity_plan(session, PlanParams.of(params), presets)
        except QueryProblem as refused:
            problem = refused
    benchmarks = list_benchmarks(session)
    return templates.TemplateResponse(
        request,
        "results/plan.html",
        {
            "p": plan,
            "problem": problem,
            "params": params,
            "benchmarks": benchmarks,
            # The menu shows the benchmark the plan is for, the default one included.
            "chosen_benchmark": params.get("benchmark")
            or (plan.benchmark if plan else default_benchmark(benchmarks)),
            "cohorts": list_cohorts(session),
            "workloads": list(workloads().values()),
            "presets": list(presets.values()),
            "api_query": _query(params),
        },
        status_code=status_of(problem) if problem else 200,
    )


@router.get("/accuracy", response_class=HTMLResponse)
def accuracy_page(request: Request, session: SessionDep) -> Response:
    """Accuracy at speed for one benchmark across systems (GET /api/v1/accuracy): the
    chart, each point's datasets, and every input in the address."""
    params = request.query_params
    problem: QueryProblem | None = None
    view = None
    try:
        view = accuracy_view(session, AccuracyParams.of(params))
    except QueryProblem as refused:
        problem = refused
    return templates.TemplateResponse(
        request,
        "results/accuracy.html",
        {
            "a": view,
            "problem": problem,
            "params": params,
            "benchmarks": list_benchmarks(session),
            "cohorts": list_cohorts(session),
            "api_query": _query(params),
        },
        status_code=status_of(problem) if problem else 200,
    )


@router.get("/agentic", response_class=HTMLResponse)
def agentic_page(request: Request, session: SessionDep) -> Response:
    """The agentic models of one organisation or system on one chart (GET /api/v1/agentic)."""
    params = request.query_params
    try:
        models = agentic_models(
            session,
            params.get("organization", ""),
            params.get("system") or None,
            params.get("cohort") or None,
            params.getlist("status"),
        )
    except QueryProblem as problem:
        return templates.TemplateResponse(
            request,
            "results/agentic.html",
            {"a": None, "problem": problem, "params": params, "cohorts": list_cohorts(session)},
            status_code=status_of(problem),
        )
    return templates.TemplateResponse(
        request, "results/agentic.html", {"a": models, "problem": None}
    )


@router.get("/embed/results", response_class=HTMLResponse)
def embedded_results(request: Request, session: SessionDep, presets: PresetsDep) -> Response:
    """The Pareto chart of a public results view, alone, for other sites to frame: the
    explorer's parameters, no cookie, no form (the one route whose CSP allows framing)."""
    params = request.query_params
    asked = ResultsParams.of(params)
    try:
        result = query_results(session, parse_results_query(session, asked, presets))
    except QueryProblem as problem:
        return templates.TemplateResponse(
            request,
            "results/embed.html",
            {"r": None, "problem": problem, "query": ""},
            status_code=status_of(problem),
        )
    query = _query(params)
    return templates.TemplateResponse(
        request, "results/embed.html", {"r": result, "problem": None, "query": query}
    )
