"""The submissions' pages: the list, the upload form and a submission's page."""

from __future__ import annotations

from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts.services.accounts import Principal, organization_of
from app.accounts.web.pages import sign_in_first
from app.accounts.web.security import PrincipalDep, page_router
from app.checks.services.rules import rule_view
from app.core.authorization import Scope
from app.settings import Settings, review_policy
from app.submissions.services.views import (
    list_submissions,
    submission_summary,
)
from app.submissions.services.visibility import visible_clause
from app.submissions.web.uploads import UploadProblem, handle_upload
from app.web.deps import QueueDep, SessionDep, SettingsDep
from app.web.templating import templates
from app.web.threads import in_thread

router = page_router()

SEVERITY_LABELS = {"error": "Errors", "warning": "Warnings", "info": "Passed checks"}


@router.get("/submissions", response_class=HTMLResponse)
def submissions_page(
    request: Request, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> Response:
    rows, total = list_submissions(session, visible_clause(session, who), limit=100)
    return templates.TemplateResponse(
        request,
        "submissions/index.html",
        {"submissions": [submission_summary(s, settings) for s in rows], "total": total},
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
            "lists_outside_review": review_policy(settings).statuses.lists_outside_review,
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
        return await in_thread(_upload_page, request, session, settings, who, problem)
    target = f"/submissions/{accepted.submission.public_id}"
    if accepted.duplicate:
        target += "?duplicate=1"
    return RedirectResponse(target, status_code=303)
