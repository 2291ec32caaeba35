"""Server-rendered pages (architecture, decision 9)."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select

from app.db.models import Organization, Retokenization, Submission, User
from app.domain.accounts import Scope
from app.domain.regions import REGIONS
from app.domain.visibility import Access
from app.services.accounts import Principal, authenticate, end_session, start_session
from app.services.artifacts import latest_events
from app.services.disclosures import system_disclosures
from app.services.reproductions import (
    ReproductionError,
    list_reproductions,
    reproduction_refusal,
    request_reproduction,
)
from app.services.results import (
    PRELIMINARY_FOOTNOTE,
    STATUSES,
    QueryProblem,
    ResultsQuery,
    list_cohorts,
    parse_results_query,
    query_results,
)
from app.services.retokenization import (
    RetokenizationError,
    cancel_retokenization,
    findings_of,
    list_retokenizations,
    missing_tokenizers,
    request_retokenization,
)
from app.services.rules import rule_catalogue, rule_view
from app.services.views import (
    curve_dict,
    group_findings,
    latest_check_run,
    list_submissions,
    reproduction_dict,
    retokenization_dict,
    submission_summary,
)
from app.services.visibility import access_to
from app.settings import Settings
from app.web.api.errors import status_of
from app.web.deps import QueueDep, SessionDep, SettingsDep
from app.web.ratelimit import enforce
from app.web.review_pages import ReviewFormError, member_submission, principal_of, review_context
from app.web.review_pages import router as review_router
from app.web.security import (
    SESSION_COOKIE,
    PrincipalDep,
    principal,
    verify_csrf,
    visible_submission,
)
from app.web.templating import templates
from app.web.uploads import UploadProblem, handle_upload

# Every page knows who is signed in (for the header), from a session cookie.
router = APIRouter(include_in_schema=False, dependencies=[Depends(principal)])
router.include_router(review_router)

SEVERITY_LABELS = {"error": "Errors", "warning": "Warnings", "info": "Passed checks"}


@router.get("/", response_class=HTMLResponse)
def index(request: Request, session: SessionDep, who: PrincipalDep) -> Response:
    everything = who is not None and (who.has(Scope.SUBMIT) or who.has(Scope.REVIEW))
    rows, total = list_submissions(session, limit=100, everything=everything)
    return templates.TemplateResponse(
        request,
        "index.html",
        {"submissions": [submission_summary(s) for s in rows], "total": total},
    )


@router.get("/results", response_class=HTMLResponse)
def results_page(request: Request, session: SessionDep) -> Response:
    params = request.query_params
    problem: QueryProblem | None = None
    try:
        result = query_results(session, parse_results_query(session, params))
    except QueryProblem as refused:
        # The form again with what was typed and what is wrong, over the default view's
        # pickers; no chart is drawn from a query that was refused.
        problem = refused
        result = query_results(session, ResultsQuery())
    return templates.TemplateResponse(
        request,
        "results.html",
        {
            "r": result,
            "problem": problem,
            "cohorts": list_cohorts(session),
            "statuses": STATUSES,
            "regions": REGIONS,
            "params": params,
            # The API takes the same parameters; empty ones are left out.
            "api_query": urlencode([(k, v) for k, v in params.multi_items() if v.strip()]),
        },
        status_code=status_of(problem) if problem else 200,
    )


@router.get("/rules", response_class=HTMLResponse)
def rules_page(request: Request) -> Response:
    return templates.TemplateResponse(request, "rules.html", {"catalogue": rule_catalogue()})


def sign_in_first(request: Request) -> RedirectResponse:
    return RedirectResponse(f"/login?{urlencode({'next': request.url.path})}", status_code=303)


@router.get("/upload", response_class=HTMLResponse)
def upload_form(
    request: Request, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> Response:
    if who is None:
        return sign_in_first(request)
    return _upload_page(request, session, settings, who)


def _upload_page(
    request: Request,
    session: SessionDep,
    settings: Settings,
    who: Principal,
    problem: UploadProblem | None = None,
) -> Response:
    organization = session.get(Organization, who.organization_id) if who.organization_id else None
    return templates.TemplateResponse(
        request,
        "upload.html",
        {
            "error": problem,
            "rule": rule_view(problem.code) if problem else None,
            "limit": settings.max_upload_bytes,
            "organization": organization.name if organization else None,
        },
        status_code=problem.status if problem else 200,
    )


@router.post("/upload")
async def upload_submit(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
    who: PrincipalDep,
) -> Response:
    if who is None:
        return sign_in_first(request)
    if not who.has(Scope.SUBMIT):
        raise HTTPException(403, detail="uploading needs the 'submit' scope")
    try:
        accepted = await handle_upload(
            request,
            session=session,
            settings=settings,
            queue=queue,
            uploader=session.get(User, who.user_id),
            check_csrf=True,
        )
    except UploadProblem as problem:
        return _upload_page(request, session, settings, who, problem)
    target = f"/submissions/{accepted.submission.public_id}"
    if accepted.duplicate:
        target += "?duplicate=1"
    return RedirectResponse(target, status_code=303)


def _render_submission(
    request: Request,
    session: SessionDep,
    settings: Settings,
    public_id: str,
    *,
    duplicate: bool = False,
    reproduction_error: ReproductionError | None = None,
    review_error: str | None = None,
    kept: dict[str, dict[str, str]] | None = None,
    status_code: int = 200,
) -> Response:
    who = principal_of(request)
    submission = visible_submission(session, who, public_id)
    level = access_to(session, who, submission)
    if level < Access.FULL:
        # The public sees a provisional result's curves, nothing of its review (§11.9).
        return templates.TemplateResponse(
            request,
            "submission_public.html",
            {
                "s": submission_summary(submission),
                "curves": [curve_dict(c, active_only=True) for c in submission.curves],
                "footnote": PRELIMINARY_FOOTNOTE,
            },
        )
    run = latest_check_run(session, submission)
    rows = list(run.findings) if run else []
    reproductions = list_reproductions(session, submission)
    curves = [curve_dict(c, reproductions) for c in submission.curves]
    retokenizations = [
        retokenization_dict(r, findings_of(session, r))
        for r in list_retokenizations(session, submission)
    ]
    # Each curve's reason it cannot be reproduced (None: it can), asked once per curve.
    refusals = [reproduction_refusal(settings, submission, row) for row in submission.curves]
    # The latest re-count of each point: its errors belong in the verdict too.
    latest_recounts = {r["point"]: r for r in reversed(retokenizations) if r["finished"]}
    recount_findings = [f for r in latest_recounts.values() for f in r["findings"]]
    return templates.TemplateResponse(
        request,
        "submission.html",
        {
            "disclosures": system_disclosures(settings, submission),
            "missing_tokenizers": missing_tokenizers(settings, submission),
            "recount_totals": {
                "points": len(latest_recounts),
                "errors": sum(f["severity"] == "error" for f in recount_findings),
                "warnings": sum(f["severity"] == "warning" for f in recount_findings),
            },
            "s": submission_summary(submission),
            "run": run,
            "groups": group_findings(rows),
            "passed_count": sum(1 for r in rows if r.severity == "info"),
            "passed_groups": group_findings([r for r in rows if r.severity == "info"], True),
            "severity_labels": SEVERITY_LABELS,
            "curves": curves,
            "duplicate": duplicate,
            "reproductions": [reproduction_dict(r) for r in reproductions],
            # Offered only where the request would be taken (the same predicate refuses it).
            "reproducible_points": [
                f"{c['system_dir']}/{c['benchmark_model']}/{p['dir']}"
                for c, refusal in zip(curves, refusals, strict=True)
                if refusal is None
                for p in c["points"]
                if p["offline"] != "dedicated"
            ],
            "reproduction_blocked": next((r for r in refusals if r is not None), None),
            "reproduction_error": reproduction_error,
            "retokenizations": retokenizations,
            "has_events": bool(latest_events(session, submission)),
            # The review record is the members' (rules §11.9): not for the public, even
            # once the results, code and artifacts are.
            "member": level >= Access.REVIEW,
            "review": review_context(session, settings, submission, who)
            if level >= Access.REVIEW
            else None,
            "review_error": review_error,
            # A refused form's fields, by form, to fill it in again.
            "kept": kept or {},
        },
        status_code=status_code,
    )


@router.get("/submissions/{public_id}", response_class=HTMLResponse)
def submission_page(
    request: Request, public_id: str, session: SessionDep, settings: SettingsDep, duplicate: int = 0
) -> Response:
    return _render_submission(request, session, settings, public_id, duplicate=bool(duplicate))


@router.post("/submissions/{public_id}/retokenizations")
def recount_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    queue: QueueDep,
    point: str = Form(""),
    csrf_token: str = Form(""),
) -> Response:
    verify_csrf(request, csrf_token)
    submission = member_submission(request, session, public_id)
    try:
        request_retokenization(
            session=session, queue=queue, submission=submission, point_label=point or None
        )
    except RetokenizationError as exc:
        raise HTTPException(status_of(exc), detail=exc.message) from exc
    session.commit()
    return RedirectResponse(f"/submissions/{public_id}#retokenization", status_code=303)


def _members_retokenization(
    request: Request, session: SessionDep, rid: str
) -> tuple[Retokenization, Submission]:
    retok = session.scalar(select(Retokenization).where(Retokenization.public_id == rid))
    if retok is None:
        raise HTTPException(404, detail=f"no re-tokenization with id {rid!r}")
    owner = session.get(Submission, retok.submission_id)
    assert owner is not None
    return retok, member_submission(request, session, owner.public_id)


@router.get("/retokenizations/{rid}")
def retokenization_page(request: Request, rid: str, session: SessionDep) -> Response:
    """A re-count is shown in its submission's re-count section."""
    _, owner = _members_retokenization(request, session, rid)
    return RedirectResponse(f"/submissions/{owner.public_id}#retokenization", status_code=303)


@router.post("/retokenizations/{rid}/cancel")
def cancel_from_page(
    request: Request, rid: str, session: SessionDep, csrf_token: str = Form("")
) -> Response:
    verify_csrf(request, csrf_token)
    retok, owner = _members_retokenization(request, session, rid)
    public_id = owner.public_id
    try:
        cancel_retokenization(session=session, retok=retok)
    except RetokenizationError as exc:
        raise HTTPException(status_of(exc), detail=exc.message) from exc
    session.commit()
    return RedirectResponse(f"/submissions/{public_id}#retokenization", status_code=303)


@router.post("/submissions/{public_id}/reproductions")
def reproduce_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
    point: str = Form(...),
    endpoint_url: str = Form(...),
    model: str = Form(""),
    api_key: str = Form(""),
    time_cap_s: float = Form(300.0),
    csrf_token: str = Form(""),
) -> Response:
    verify_csrf(request, csrf_token)
    submission = member_submission(request, session, public_id)
    who = principal_of(request)
    assert who is not None  # member_submission let only the signed-in through
    try:
        request_reproduction(
            session=session,
            settings=settings,
            queue=queue,
            submission=submission,
            point_label=point,
            endpoint_url=endpoint_url,
            model=model or None,
            api_key=api_key or None,
            time_cap_s=time_cap_s,
            requested_by=who.email,
        )
    except ReproductionError as exc:
        session.rollback()
        # Filled in again as sent (the API key is never echoed back).
        typed = {"point": point, "endpoint_url": endpoint_url, "model": model,
                 "time_cap_s": f"{time_cap_s:g}"}  # fmt: skip
        return _render_submission(
            request, session, settings, public_id, reproduction_error=exc,
            kept={"reproduce": typed}, status_code=status_of(exc),
        )  # fmt: skip
    session.commit()
    return RedirectResponse(f"/submissions/{public_id}#reproductions", status_code=303)


def _local_path(target: str) -> str:
    """Only a path on this site (no scheme, no host): an open redirect otherwise."""
    return target if target.startswith("/") and not target.startswith("//") else "/"


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> Response:
    return templates.TemplateResponse(
        request, "login.html", {"error": None, "next": _local_path(next)}
    )


@router.post("/login")
def login(
    request: Request,
    session: SessionDep,
    email: str = Form(""),
    password: str = Form(""),
    next: str = Form("/"),
    csrf_token: str = Form(""),
) -> Response:
    verify_csrf(request, csrf_token)
    limit = request.app.state.settings.login_attempts_per_minute
    enforce(request, "sign-in", limit, 60)
    enforce(request, "sign-in", limit, 60, key=f"email:{email.strip().lower()}")
    user = authenticate(session=session, email=email, password=password)
    if user is None:
        return templates.TemplateResponse(
            request,
            "login.html",
            {"error": "Wrong e-mail or password.", "next": _local_path(next), "email": email},
            status_code=401,
        )
    secret = start_session(session=session, user=user)
    session.commit()
    response = RedirectResponse(_local_path(next), status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        secret,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        max_age=12 * 3600,
    )
    return response


@router.post("/logout")
def logout(request: Request, session: SessionDep, csrf_token: str = Form("")) -> Response:
    verify_csrf(request, csrf_token)
    if cookie := request.cookies.get(SESSION_COOKIE):
        end_session(session=session, cookie=cookie)
        session.commit()
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


def review_form_refused(request: Request, exc: Exception) -> Response:
    """A refused review form: the submission page again, saying why (main.py wires it)."""
    assert isinstance(exc, ReviewFormError)
    with request.app.state.db.session() as session:
        return _render_submission(
            request,
            session,
            request.app.state.settings,
            exc.public_id,
            review_error=exc.message,
            kept={exc.form: exc.kept},
            status_code=exc.status,
        )
