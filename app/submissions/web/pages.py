"""The submissions' pages: the list, the upload form and a submission's page."""

from __future__ import annotations

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts.services.accounts import Principal, organization_of
from app.accounts.services.authorization import actor_of
from app.accounts.web.pages import sign_in_first
from app.accounts.web.security import PrincipalDep, page_router, principal_of
from app.checks.domain.findings import Severity
from app.checks.services.findings import group_findings
from app.checks.services.rules import rule_view
from app.core.authorization import Action, Scope, may
from app.core.regions import Offline
from app.results.services.public import (
    PRELIMINARY_FOOTNOTE,
)
from app.review.web.pages import ReviewFormError, review_context
from app.runs.services.reproductions import (
    ReproductionError,
    list_reproductions,
    reproduction_refusal,
)
from app.runs.services.retokenization import (
    findings_of,
    list_retokenizations,
    missing_tokenizers,
)
from app.runs.services.views import reproduction_view, retokenization_view
from app.settings import Settings
from app.submissions.domain.visibility import Access
from app.submissions.services.artifacts import latest_events
from app.submissions.services.disclosures import system_disclosures
from app.submissions.services.views import (
    curve_view,
    latest_check_run,
    list_submissions,
    submission_summary,
)
from app.submissions.services.visibility import access_to
from app.submissions.web.access import visible_submission
from app.submissions.web.uploads import UploadProblem, handle_upload
from app.web.deps import QueueDep, SessionDep, SettingsDep
from app.web.templating import templates

router = page_router()

SEVERITY_LABELS = {"error": "Errors", "warning": "Warnings", "info": "Passed checks"}


@router.get("/submissions", response_class=HTMLResponse)
def index(request: Request, session: SessionDep, who: PrincipalDep) -> Response:
    everything = who is not None and (who.has(Scope.SUBMIT) or who.has(Scope.REVIEW))
    rows, total = list_submissions(session, limit=100, everything=everything)
    return templates.TemplateResponse(
        request,
        "submissions/index.html",
        {"submissions": [submission_summary(s) for s in rows], "total": total},
    )


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
    organization = organization_of(session, who)
    return templates.TemplateResponse(
        request,
        "submissions/upload.html",
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
            who=who,
            check_csrf=True,
        )
    except UploadProblem as problem:
        return _upload_page(request, session, settings, who, problem)
    target = f"/submissions/{accepted.submission.public_id}"
    if accepted.duplicate:
        target += "?duplicate=1"
    return RedirectResponse(target, status_code=303)


def render_submission(
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
            "submissions/submission_public.html",
            {
                "s": submission_summary(submission),
                "curves": [curve_view(c, active_only=True) for c in submission.curves],
                "footnote": PRELIMINARY_FOOTNOTE,
            },
        )
    run = latest_check_run(session, submission)
    rows = list(run.findings) if run else []
    reproductions = list_reproductions(session, submission)
    curves = [curve_view(c, reproductions) for c in submission.curves]
    retokenizations = [
        retokenization_view(r, findings_of(session, r))
        for r in list_retokenizations(session, submission)
    ]
    # Each curve's reason it cannot be reproduced (None: it can), asked once per curve.
    refusals = [reproduction_refusal(settings, submission, row) for row in submission.curves]
    # The latest re-count of each point: its errors belong in the verdict too.
    latest_recounts = {r.point: r for r in reversed(retokenizations) if r.finished}
    recount_findings = [f for r in latest_recounts.values() for f in r.findings]
    return templates.TemplateResponse(
        request,
        "submissions/submission.html",
        {
            "disclosures": system_disclosures(settings, submission),
            # The archive itself: its organisation, the committee and the chair only.
            "may_download_archive": level >= Access.REVIEW,
            "missing_tokenizers": missing_tokenizers(settings, submission),
            "recount_totals": {
                "points": len(latest_recounts),
                "errors": sum(f.severity == Severity.ERROR for f in recount_findings),
                "warnings": sum(f.severity == Severity.WARNING for f in recount_findings),
            },
            "s": submission_summary(submission),
            "run": run,
            "groups": group_findings(rows),
            "passed_count": sum(1 for r in rows if r.severity == "info"),
            "passed_groups": group_findings([r for r in rows if r.severity == "info"], True),
            "severity_labels": SEVERITY_LABELS,
            "curves": curves,
            "duplicate": duplicate,
            "reproductions": [
                reproduction_view(r, private=level >= Access.REVIEW) for r in reproductions
            ],
            # Offered only where the request would be taken (the same predicate refuses it).
            "reproducible_points": [
                f"{c.system_dir}/{c.benchmark_model}/{p.dir}"
                for c, refusal in zip(curves, refusals, strict=True)
                if refusal is None
                for p in c.points
                if p.offline != Offline.DEDICATED
            ],
            "reproduction_blocked": next((r for r in refusals if r is not None), None),
            "reproduction_error": reproduction_error,
            "retokenizations": retokenizations,
            "has_events": bool(latest_events(session, submission)),
            # The review record is the members' (rules §11.9): not for the public, even
            # once the results, code and artifacts are.
            "member": level >= Access.REVIEW,
            # The forms shown are the acts the one rule allows this caller.
            "may_recount": may(actor_of(who, submission), Action.RECOUNT) is None,
            "may_reproduce": may(actor_of(who, submission), Action.REPRODUCE) is None,
            "may_attest_same_system": may(actor_of(who, submission), Action.ATTEST_SAME_SYSTEM)
            is None,
            "max_reproduction_runs": settings.reproduction_max_runs,
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
    return render_submission(request, session, settings, public_id, duplicate=bool(duplicate))


def review_form_refused(request: Request, exc: Exception) -> Response:
    """A refused review form: the submission page again, saying why (main.py wires it)."""
    assert isinstance(exc, ReviewFormError)
    with request.app.state.db.session() as session:
        return render_submission(
            request,
            session,
            request.app.state.settings,
            exc.public_id,
            review_error=exc.message,
            kept={exc.form: exc.kept},
            status_code=exc.status,
        )
