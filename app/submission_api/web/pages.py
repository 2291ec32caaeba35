"""The organisation's measured runs in the browser, and a submission composed from
chosen ones: the same runs, builder, checks and record as the official CLI's."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.web.pages import sign_in_first
from app.accounts.web.security import PrincipalDep, page_router, verify_csrf
from app.core import text_limits as text
from app.core.refusals import Refused
from app.measurements.services.registry import organization_runs
from app.submission_api.services.compose import CheckerRefused, compose_submission
from app.submission_api.services.records import (
    AVAILABILITIES,
    DIVISIONS,
    SCENARIOS,
    SubmissionCreate,
    submissions_by_run,
)
from app.web.api_errors import status_of
from app.web.deps import NowDep, QueueDep, SessionDep, SettingsDep
from app.web.templating import templates

router = page_router()


def _runs_page(
    request: Request,
    session: Session,
    who: Principal,
    *,
    problem: Refused | None = None,
    kept: dict[str, Any] | None = None,
) -> Response:
    runs = organization_runs(session, who.organization_id) if who.organization_id else []
    return templates.TemplateResponse(
        request,
        "submission_api/runs.html",
        {
            "runs": runs,
            "used_by": submissions_by_run(session, who),
            "problem": problem,
            "checker_errors": problem.errors if isinstance(problem, CheckerRefused) else [],
            "kept": kept or {},
            "divisions": DIVISIONS,
            "scenarios": SCENARIOS,
            "availabilities": AVAILABILITIES,
        },
        status_code=status_of(problem) if problem else 200,
    )


@router.get("/runs", response_class=HTMLResponse)
def runs_page(request: Request, session: SessionDep, who: PrincipalDep) -> Response:
    """The organisation's runs: registered with the official CLI (``runs create``)."""
    if who is None:
        return sign_in_first(request)
    return _runs_page(request, session, who)


def _date(value: str) -> dt.date | None:
    return dt.date.fromisoformat(value) if value.strip() else None


@router.post("/runs/compose")
def compose(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
    who: PrincipalDep,
    now: NowDep,
    run_ids: Annotated[list[str] | None, Form()] = None,
    division: str = Form("standardized", max_length=text.SHORT),
    scenario: str = Form("cop", max_length=text.SHORT),
    availability: str = Form("available", max_length=text.SHORT),
    target_availability_date: str = Form("", max_length=text.SHORT),
    provisional: str = Form("", max_length=text.SHORT),
    is_test: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    """Compose a submission from the chosen runs, as ``submissions create`` does."""
    verify_csrf(request, csrf_token)
    if who is None:
        return sign_in_first(request)
    run_ids = run_ids or []
    kept = {"run_ids": run_ids, "division": division, "scenario": scenario,
            "availability": availability, "target_availability_date": target_availability_date,
            "provisional": provisional, "is_test": is_test}  # fmt: skip
    try:
        body = SubmissionCreate(
            division=division, scenario=scenario, availability=availability,
            run_ids=run_ids[:512], is_test=bool(is_test), early_publish=bool(provisional),
            target_availability_date=_date(target_availability_date),
        )  # fmt: skip
        record = compose_submission(session=session, settings=settings, queue=queue, who=who,
                                    body=body, now=now)  # fmt: skip
    except ValueError:
        session.rollback()
        problem = Refused("bad-date", "the target availability date is a date like 2027-03-01")
        return _runs_page(request, session, who, problem=problem, kept=kept)
    except Refused as problem:
        session.rollback()
        return _runs_page(request, session, who, problem=problem, kept=kept)
    session.commit()
    return RedirectResponse(f"/submissions/{record.public_id}", status_code=303)
