"""/api/v1 for fraud and misrepresentation reports (rules §11.5, SR §8.4): filed by any
member, screened by neutral members, decided by the chair."""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.accounts.services.accounts import Principal
from app.accounts.web.security import SignedInDep
from app.core import text_limits as text
from app.core.authorization import Action
from app.core.divisions import Availability, Division
from app.core.lifecycle import FraudOutcome, Screening
from app.core.views import Listing
from app.db.models import FraudReport
from app.publishing.domain.standing import Remedy
from app.review.services.fraud import (
    FraudReportView,
    decide_report,
    readable_report,
    report_fraud,
    report_view,
    reports_on,
    screen_report,
)
from app.submissions.web.access import acting_on, visible_submission
from app.web.api_errors import answered
from app.web.deps import NowDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["review: fraud reports"])


def report_or_404(session: SessionDep, public_id: str, who: Principal) -> FraudReport:
    """The report, for the chairs, the neutral members and whoever filed it; 404 for
    anyone else (its existence is confidential)."""
    report = readable_report(session, public_id, who)
    if report is None:
        raise HTTPException(404, detail=f"no fraud report with id {public_id!r}")
    return report


class FraudReportRequest(BaseModel):
    allegation: str = Field(max_length=text.SHORT, description="what is misrepresented")
    evidence: str = Field(max_length=text.LONG, description="what shows it")


@router.post(
    "/submissions/{public_id}/fraud-reports", status_code=201, response_model=FraudReportView
)
def create_fraud_report(
    public_id: str,
    body: FraudReportRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> FraudReportView | JSONResponse:
    """Report suspected fraud or misrepresentation (any member, at any time); the chairs
    and the neutral members are told, the submitting organisation is not."""
    submission = acting_on(session, who, public_id, Action.REPORT_FRAUD)
    return answered(session, lambda: report_view(settings, report_fraud(
        session=session, submission=submission, who=who, allegation=body.allegation,
        evidence=body.evidence, at=now), who))  # fmt: skip


@router.get("/submissions/{public_id}/fraud-reports", response_model=Listing[FraudReportView])
def read_fraud_reports(
    public_id: str, session: SessionDep, settings: SettingsDep, who: SignedInDep
) -> Listing[FraudReportView]:
    """The reports on the submission the caller may read: all of them for the chairs and
    the neutral members, one's own for anyone else."""
    submission = visible_submission(session, who, public_id)
    return Listing(
        data=[report_view(settings, r, who) for r in reports_on(session, submission, who)]
    )


@router.get("/fraud-reports/{report_id}", response_model=FraudReportView)
def read_fraud_report(
    report_id: str, session: SessionDep, settings: SettingsDep, who: SignedInDep
) -> FraudReportView:
    return report_view(settings, report_or_404(session, report_id, who), who)


class ScreeningRequest(BaseModel):
    finding: Screening
    note: str = Field(max_length=text.LONG, description="why: what the screener checked")


@router.post("/fraud-reports/{report_id}/screenings", response_model=FraudReportView)
def screen_fraud_report(
    report_id: str,
    body: ScreeningRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> FraudReportView | JSONResponse:
    """A neutral member's finding (once each); the chair decides after two."""
    report = report_or_404(session, report_id, who)
    return answered(session, lambda: report_view(settings, screen_report(
        session=session, report=report, who=who, finding=body.finding, note=body.note,
        at=now), who))  # fmt: skip


class FraudDecisionRequest(BaseModel):
    outcome: FraudOutcome
    reason: str = Field(max_length=text.REASON)
    division: Division | None = Field(default=None, description="reclassified: the division")
    availability: Availability | None = Field(
        default=None, description="reclassified: the lower publication status"
    )
    target_availability_date: dt.date | None = Field(
        default=None, description="reclassified to Preview: the date it will be Available"
    )


@router.post("/fraud-reports/{report_id}/decision", response_model=FraudReportView)
def decide_fraud_report(
    report_id: str,
    body: FraudDecisionRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> FraudReportView | JSONResponse:
    """The chair's outcome: invalid, reclassified (with the remedy's fields) or removed
    (invalidated once finalized, rejected in review); on the submission's timeline when
    it changes the result."""
    report = report_or_404(session, report_id, who)
    remedy = Remedy(body.division, body.availability, body.target_availability_date)
    return answered(session, lambda: report_view(settings, decide_report(
        session=session, settings=settings, report=report, who=who, outcome=body.outcome,
        reason=body.reason, remedy=remedy, at=now), who))  # fmt: skip
