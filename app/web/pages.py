"""Server-rendered pages (architecture, decision 9)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from app.services.views import (
    curve_dict,
    get_submission,
    group_findings,
    latest_check_run,
    list_submissions,
    submission_summary,
)

from .deps import QueueDep, SessionDep, SettingsDep
from .uploads import UploadProblem, handle_upload

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"
templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
router = APIRouter(include_in_schema=False)

SEVERITY_LABELS = {"error": "Errors", "warning": "Warnings", "info": "Passed checks"}


@router.get("/", response_class=HTMLResponse)
def index(request: Request, session: SessionDep) -> Response:
    rows, total = list_submissions(session, limit=100)
    return templates.TemplateResponse(
        request,
        "index.html",
        {"submissions": [submission_summary(s) for s in rows], "total": total},
    )


@router.get("/upload", response_class=HTMLResponse)
def upload_form(request: Request, settings: SettingsDep) -> Response:
    return templates.TemplateResponse(
        request, "upload.html", {"error": None, "limit": settings.max_upload_bytes}
    )


@router.post("/upload")
async def upload_submit(
    request: Request, session: SessionDep, settings: SettingsDep, queue: QueueDep
) -> Response:
    try:
        accepted = await handle_upload(request, session=session, settings=settings, queue=queue)
    except UploadProblem as problem:
        return templates.TemplateResponse(
            request,
            "upload.html",
            {"error": problem, "limit": settings.max_upload_bytes},
            status_code=problem.status,
        )
    target = f"/submissions/{accepted.submission.public_id}"
    if accepted.duplicate:
        target += "?duplicate=1"
    return RedirectResponse(target, status_code=303)


@router.get("/submissions/{public_id}", response_class=HTMLResponse)
def submission_page(
    request: Request, public_id: str, session: SessionDep, duplicate: int = 0
) -> Response:
    submission = get_submission(session, public_id)
    if submission is None:
        raise HTTPException(404, detail=f"no submission with id {public_id!r}")
    run = latest_check_run(session, submission)
    rows = list(run.findings) if run else []
    return templates.TemplateResponse(
        request,
        "submission.html",
        {
            "s": submission_summary(submission),
            "run": run,
            "groups": group_findings(rows),
            "passed_count": sum(1 for r in rows if r.severity == "info"),
            "passed_groups": group_findings([r for r in rows if r.severity == "info"], True),
            "severity_labels": SEVERITY_LABELS,
            "curves": [curve_dict(c) for c in submission.curves],
            "duplicate": bool(duplicate),
        },
    )
