"""The fraud-report forms of the submission page (rules §11.5, SR §8.4): any member
reports, neutral members screen, the chair decides; through the same services as the
API (``app.review.web.fraud``)."""

from __future__ import annotations

from fastapi import Form, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.web.security import page_router, signed_in_as, verify_csrf
from app.core import text_limits as text
from app.core.authorization import Action, Scope
from app.db.models import FraudReport
from app.publishing.domain.standing import Remedy
from app.review.services.fraud import decide_report, report_fraud, screen_report
from app.review.web.forms import carry_out, checked_form, form_day
from app.review.web.fraud import report_or_404
from app.web.deps import NowDep, SessionDep, SettingsDep

router = page_router()


@router.post("/submissions/{public_id}/fraud-reports")
def report_fraud_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    allegation: str = Form("", max_length=text.SHORT),
    evidence: str = Form("", max_length=text.LONG),
    csrf_token: str = Form(""),
) -> Response:
    who, submission = checked_form(request, session, public_id, csrf_token, Action.REPORT_FRAUD)
    return carry_out(
        session, public_id,
        lambda: report_fraud(session=session, submission=submission, who=who,
                             allegation=allegation, evidence=evidence, at=now),
        "fraud", form="fraud-report", kept={"allegation": allegation, "evidence": evidence},
    )  # fmt: skip


def _report_form(request: Request, session: Session, report_id: str, csrf: str) -> tuple[
    Principal, FraudReport
]:  # fmt: skip
    verify_csrf(request, csrf)
    who = signed_in_as(request, Scope.REVIEW)  # the chairs and the neutral members
    return who, report_or_404(session, report_id, who)


@router.post("/fraud-reports/{report_id}/screenings")
def screen_from_page(
    request: Request,
    report_id: str,
    session: SessionDep,
    now: NowDep,
    finding: str = Form("", max_length=text.SHORT),
    note: str = Form("", max_length=text.LONG),
    csrf_token: str = Form(""),
) -> Response:
    """A neutral member screens a fraud report."""
    who, report = _report_form(request, session, report_id, csrf_token)
    return carry_out(
        session, report.submission.public_id,
        lambda: screen_report(session=session, report=report, who=who, finding=finding,
                              note=note, at=now),
        "fraud", form=f"fraud-{report_id}", kept={"finding": finding, "note": note},
    )  # fmt: skip


@router.post("/fraud-reports/{report_id}/decision")
def decide_report_from_page(
    request: Request,
    report_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    outcome: str = Form("", max_length=text.SHORT),
    reason: str = Form("", max_length=text.REASON),
    division: str = Form("", max_length=text.SHORT),
    availability: str = Form("", max_length=text.SHORT),
    target_availability_date: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    """The chair decides a screened fraud report."""
    who, report = _report_form(request, session, report_id, csrf_token)
    public_id = report.submission.public_id
    kept = {"outcome": outcome, "reason": reason, "division": division,
            "availability": availability,
            "target_availability_date": target_availability_date}  # fmt: skip
    day = form_day(public_id, f"fraud-{report_id}", target_availability_date, kept)
    remedy = Remedy(division or None, availability or None, day)
    return carry_out(
        session, public_id,
        lambda: decide_report(session=session, settings=settings, report=report, who=who,
                              outcome=outcome, reason=reason, remedy=remedy, at=now),
        "fraud", form=f"fraud-{report_id}", kept=kept,
    )  # fmt: skip
