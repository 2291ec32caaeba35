"""The audits page (rules §11.12, SR §10): the quarter's rounds, the committee's
nominations and ballots, the neutral members' screenings, the chairs' slate, tally,
draw, steps and outcomes; one form handler over the same dispatcher as the API."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from fastapi import Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.web.security import page_router, principal_of, signed_in_as, verify_csrf
from app.core import text_limits as text
from app.core.authorization import Role, Scope
from app.core.lifecycle import Screening
from app.core.refusals import Refused
from app.review.domain.audits import NominationKind, Outcome, ReproducibilityCase
from app.review.services.audits import STEPS, AuditFields, act_on_audits, quarter_now, rounds_view
from app.settings import Settings
from app.submissions.web.access import visible_submission
from app.web.api_errors import status_of
from app.web.deps import NowDep, SessionDep, SettingsDep, get_now
from app.web.templating import templates

router = page_router()


@router.get("/review/audits", response_class=HTMLResponse)
def audits_page(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The audit rounds (rules §11.12): the committee's nominations and ballots, the
    chairs' tally, draw, steps and outcomes."""
    who = principal_of(request)
    if who is None:
        return RedirectResponse("/login?next=/review/audits", status_code=303)
    if not who.has(Scope.REVIEW):
        raise HTTPException(403, detail="the audits are the committee's")
    return _audits_page(request, session, settings, who)


def _audits_page(
    request: Request,
    session: Session,
    settings: Settings,
    who: Principal,
    error: str | None = None,
    status: int = 200,
) -> Response:
    return templates.TemplateResponse(
        request,
        "review/audits.html",
        {
            "rounds": rounds_view(session, settings),
            "is_chair": who.has(Scope.PUBLISH),
            "is_member": who.organization_id is not None,
            "this_quarter": quarter_now(settings, get_now(request)),
            "steps": STEPS,
            "outcomes": list(Outcome),
            "kinds": list(NominationKind),
            "findings": list(Screening),
            "is_neutral": who.role == Role.NEUTRAL,
            "error": error,
        },
        status_code=status,
    )


@router.post("/review/audits", response_class=HTMLResponse)
def audits_act(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    now: NowDep,
    act: str = Form("", max_length=text.SHORT),
    quarter: str = Form("", max_length=text.SHORT),
    audit: str = Form("", max_length=text.SHORT),
    submission: str = Form("", max_length=text.SHORT),
    reason: str = Form("", max_length=text.REASON),
    ranking: Annotated[list[str] | None, Form()] = None,
    cohort: str = Form("", max_length=text.SHORT),
    step: str = Form("", max_length=text.SHORT),
    on: str = Form("", max_length=text.SHORT),
    note: str = Form("", max_length=text.REASON),
    outcome: str = Form("", max_length=text.SHORT),
    kind: str = Form(NominationKind.COMMITTEE, max_length=text.SHORT),
    points: str = Form("", max_length=text.REASON),
    reproduction: str = Form("", max_length=text.LONG),
    deviation: str = Form("", max_length=text.REASON),
    rule_cited: str = Form("", max_length=text.SHORT),
    nomination: str = Form("", max_length=text.SHORT),
    finding: str = Form("", max_length=text.SHORT),
    admit: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    """One act of an audit round, a nomination or an audit, by whoever the services let
    take it."""
    verify_csrf(request, csrf_token)
    who = signed_in_as(request, Scope.REVIEW)
    try:
        day = dt.date.fromisoformat(on) if on else None
    except ValueError:
        return _audits_page(request, session, settings, who, f"{on!r} is not a date", 422)
    fields = AuditFields(
        quarter=quarter, audit=audit, reason=reason, ranking=tuple(ranking or []),
        submission=visible_submission(session, who, submission) if submission else None,
        cohort=cohort, step=step, on=day, note=note, outcome=outcome, kind=kind,
        case=ReproducibilityCase(tuple(points.replace(",", " ").split()), reproduction,
                                 deviation, rule_cited),
        nomination=nomination, finding=finding, admit=admit == "yes",
    )  # fmt: skip
    try:
        act_on_audits(act, fields, session=session, settings=settings, who=who, at=now)
    except Refused as exc:
        session.rollback()
        return _audits_page(request, session, settings, who, exc.message, status_of(exc))
    session.commit()
    return RedirectResponse("/review/audits", status_code=303)
