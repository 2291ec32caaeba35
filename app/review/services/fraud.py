"""Fraud and misrepresentation reports (rules §11.5, SR §8.4): filed by any member at any
time, screened by at least two neutral members, decided by the chair, whose outcome may
reclassify or remove the result through the chair's decisions.

A report is confidential to the chairs, the neutral members and whoever filed it: the
submitting organisation hears of it only through a decision that changes its result,
which goes on its timeline like any other.
"""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import chairs, neutral_members, notify
from app.core.authorization import Actor, Role
from app.core.lifecycle import FraudOutcome, FraudState, Screening
from app.core.refusals import Kind, Refusal, Refused
from app.core.views import Timestamp
from app.db.models import FraudReport, FraudScreening, Submission, utcnow
from app.publishing.domain.standing import Remedy
from app.review.domain.fraud import (
    may_decide_report,
    may_report_fraud,
    may_screen,
    removal_decision,
)
from app.review.services.decisions import decide, reclassify
from app.review.services.policy import facts_of
from app.settings import Settings, review_policy


class FraudRefused(Refused):
    default_kind = Kind.CONFLICT


def _enforce(refusal: Refusal | None) -> None:
    if refusal is not None:
        raise FraudRefused(refusal.code, refusal.message, refusal.kind)


def _required(**fields: str) -> None:
    for name, value in fields.items():
        if not value.strip():
            raise FraudRefused(f"{name}-required", f"a fraud report needs its {name}", Kind.INVALID)


def _link(report: FraudReport) -> str:
    return f"/submissions/{report.submission.public_id}#fraud-{report.public_id}"


def report_fraud(
    *,
    session: Session,
    submission: Submission,
    who: Principal,
    allegation: str,
    evidence: str,
    at: dt.datetime | None = None,
) -> FraudReport:
    """Any member reports suspected fraud or misrepresentation, at any time; the chairs
    and the neutral members are told."""
    at = at or utcnow()
    _enforce(may_report_fraud(actor_of(who, submission), facts_of(session, submission)))
    _required(allegation=allegation, evidence=evidence)
    report = FraudReport(
        submission=submission,
        filed_by_id=who.user_id,
        allegation=allegation.strip(),
        evidence=evidence.strip(),
        filed_at=at,
        state=FraudState.SCREENING,
    )
    session.add(report)
    session.flush()
    notify(
        session,
        [*chairs(session), *neutral_members(session)],
        f"Fraud report to screen: {submission.organization.name} "
        f"submission {submission.public_id[:8]}",
        report.allegation,
        _link(report),
    )
    return report


def screen_report(
    *,
    session: Session,
    report: FraudReport,
    who: Principal,
    finding: str,
    note: str,
    at: dt.datetime | None = None,
) -> FraudReport:
    """A neutral member's finding on the report, once; the chairs are told."""
    at = at or utcnow()
    screened = any(s.user_id == who.user_id for s in report.screenings)
    _enforce(may_screen(actor_of(who, report.submission), report.state, screened))
    if finding not in tuple(Screening):
        raise FraudRefused(
            "bad-finding", f"the finding is one of {', '.join(Screening)}", Kind.INVALID
        )
    _required(note=note)
    report.screenings.append(
        FraudScreening(user_id=who.user_id, finding=Screening(finding), note=note.strip(), at=at)
    )
    session.flush()
    notify(session, chairs(session), f"Fraud report screened ({finding})", note.strip(),
           _link(report))  # fmt: skip
    return report


def decide_report(
    *,
    session: Session,
    settings: Settings,
    report: FraudReport,
    who: Principal,
    outcome: str,
    reason: str,
    remedy: Remedy | None = None,
    at: dt.datetime | None = None,
) -> FraudReport:
    """The chair's outcome once the neutral members have screened: the report is
    invalid, or the result is reclassified (*remedy*) or removed, by the chair's own
    decisions (on the submission's timeline, with this reason)."""
    at = at or utcnow()
    submission = report.submission
    required = review_policy(settings).fraud_neutral_screeners
    _enforce(may_decide_report(actor_of(who, submission), report.state, _neutral_count(report),
                               required))  # fmt: skip
    if outcome not in tuple(FraudOutcome):
        raise FraudRefused(
            "bad-outcome", f"the outcome is one of {', '.join(FraudOutcome)}", Kind.INVALID
        )
    _required(reason=reason)
    why = f"fraud report {report.public_id[:8]}: {reason.strip()}"
    if outcome == FraudOutcome.RECLASSIFIED:
        reclassify(session=session, settings=settings, submission=submission, actor=who.email,
                   reason=why, remedy=remedy or Remedy(), at=at)  # fmt: skip
    elif outcome == FraudOutcome.REMOVED:
        action = removal_decision(facts_of(session, submission))
        decide(session=session, settings=settings, submission=submission, actor=who.email,
               action=action, reason=why, at=at)  # fmt: skip
    report.state = FraudState.DECIDED
    report.outcome = FraudOutcome(outcome)
    report.decided_by, report.decided_at, report.reason = who.email, at, reason.strip()
    session.flush()
    told = [report.filed_by, *(s.user for s in report.screenings)]
    notify(session, told, f"Fraud report decided: {outcome}", reason.strip(), _link(report))
    return report


def _neutral_count(report: FraudReport) -> int:
    """The screenings by neutral members (a member's role may change after screening)."""
    return sum(1 for s in report.screenings if s.user.role == Role.NEUTRAL)


def _sees_every_report(actor: Actor) -> bool:
    return actor.chair or actor.neutral


def reports_on(
    session: Session, submission: Submission, who: Principal | None
) -> list[FraudReport]:
    """The reports on *submission* that *who* may read: every one for the chairs and the
    neutral members, the ones they filed for anyone else."""
    if who is None:
        return []
    query = select(FraudReport).where(FraudReport.submission_id == submission.id)
    if not _sees_every_report(actor_of(who, submission)):
        query = query.where(FraudReport.filed_by_id == who.user_id)
    return list(session.scalars(query.order_by(FraudReport.id)))


def readable_report(session: Session, public_id: str, who: Principal) -> FraudReport | None:
    """The report *public_id* if *who* may read it (else None: it does not exist for them)."""
    report = session.scalar(select(FraudReport).where(FraudReport.public_id == public_id))
    if report is None:
        return None
    if _sees_every_report(actor_of(who, report.submission)) or report.filed_by_id == who.user_id:
        return report
    return None


class ScreeningView(BaseModel):
    by: str
    finding: str
    note: str
    at: Timestamp


class FraudReportView(BaseModel):
    id: str
    submission: str
    filed_by: str
    allegation: str
    evidence: str
    filed_at: Timestamp
    state: str = Field(description="screening, or decided")
    outcome: str | None = Field(description="invalid, reclassified or removed")
    decided_by: str | None
    decided_at: Timestamp | None
    reason: str | None
    screenings: list[ScreeningView] = Field(description="the neutral members' findings")
    can_screen: bool = Field(description="the caller may screen it now")
    can_decide: bool = Field(description="the caller may decide it now")


def report_view(settings: Settings, report: FraudReport, who: Principal | None) -> FraudReportView:
    asking = actor_of(who, report.submission)
    screened = who is not None and any(s.user_id == who.user_id for s in report.screenings)
    return FraudReportView(
        id=report.public_id,
        submission=report.submission.public_id,
        filed_by=report.filed_by.email,
        allegation=report.allegation,
        evidence=report.evidence,
        filed_at=report.filed_at,
        state=report.state,
        outcome=report.outcome,
        decided_by=report.decided_by,
        decided_at=report.decided_at,
        reason=report.reason,
        screenings=[
            ScreeningView(by=s.user.email, finding=s.finding, note=s.note, at=s.at)
            for s in report.screenings
        ],
        can_screen=may_screen(asking, report.state, screened) is None,
        can_decide=may_decide_report(
            asking,
            report.state,
            _neutral_count(report),
            review_policy(settings).fraud_neutral_screeners,
        )
        is None,
    )
