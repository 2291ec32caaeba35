"""A Standardized client-over-network result's endpoint (rules §11.10): it must stay
reachable, with a contact, for 90 days after publication (the policy's days). The bundle
discloses the endpoint and contact (``system_desc.json``); the chair records the checks;
a failed one within the window breaks the Available test, and the chair and the
submitting organisation are told so, the chair deciding the remedy (a reclassification,
or invalidation). The dates are ``app.publishing.domain.standing``'s.
"""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import chairs, members_of, notify
from app.audit import record
from app.core.authorization import Action, may
from app.core.refusals import Kind, Refused
from app.core.views import Timestamp
from app.db.models import ReachabilityCheck, Submission
from app.publishing.domain.standing import (
    con_reachable_until,
    owes_reachability,
    unreachable_problem,
)
from app.publishing.services.previews import first_public_cohort
from app.publishing.services.standing import classification_of
from app.settings import Settings, review_clock, review_policy
from app.submissions.services.disclosures import system_disclosures


class ReachabilityRefused(Refused):
    default_kind = Kind.CONFLICT


class CheckView(BaseModel):
    reachable: bool
    detail: str
    checked_on: dt.date
    recorded_by: str
    recorded_at: Timestamp


class EndpointView(BaseModel):
    system_dir: str
    url: str | None = Field(description="the endpoint the bundle discloses (endpoint_url)")
    contact: str | None = Field(description="its contact (submitter_contact)")
    reachable_until: dt.date | None = Field(
        description="the last day it must stay reachable (None until the result is public)"
    )
    checks: list[CheckView]
    problem: str | None = Field(description="a failed check within the window, in words")


def _until(
    session: Session, settings: Settings, submission: Submission
) -> dict[str, dt.date | None]:
    """Per Standardized CoN system: the last day its endpoint must stay reachable."""
    owing = [
        system.dir_name
        for system in submission.systems
        if owes_reachability(classification_of(submission, system).division, submission.scenario)
    ]
    if not owing:  # nearly every result: no need to ask the record when it was first public
        return {}
    first = first_public_cohort(session, submission)
    days = review_policy(settings).con_reachable_days
    last_day = con_reachable_until(first.date if first else None, days)
    return dict.fromkeys(owing, last_day)


def endpoint_views(
    session: Session, settings: Settings, submission: Submission
) -> list[EndpointView]:
    """The submission's Standardized CoN endpoints with their checks (none for others)."""
    until = _until(session, settings, submission)
    if not until:
        return []
    disclosed = system_disclosures(settings, submission)
    checks = session.scalars(
        select(ReachabilityCheck)
        .where(ReachabilityCheck.submission_id == submission.id)
        .order_by(ReachabilityCheck.id)
    ).all()
    out = []
    for system_dir, last_day in until.items():
        endpoint = disclosed.get(system_dir, {}).get("endpoint") or {}
        mine = [c for c in checks if c.system_dir == system_dir]
        failed = [c for c in mine if not c.reachable]
        problems = [unreachable_problem(last_day, c.checked_on) for c in failed]
        out.append(
            EndpointView(
                system_dir=system_dir,
                url=endpoint.get("url"),
                contact=endpoint.get("contact"),
                reachable_until=last_day,
                checks=[CheckView.model_validate(c, from_attributes=True) for c in mine],
                problem=next((p for p in reversed(problems) if p), None),
            )
        )
    return out


def record_reachability(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    who: Principal,
    system_dir: str,
    reachable: bool,
    detail: str,
    checked_on: dt.date,
    at: dt.datetime,
) -> ReachabilityCheck:
    """The chair records a check of the endpoint; a failed one within the window tells
    the chair and the submitting organisation that the result is not Available."""
    if (refusal := may(actor_of(who, submission), Action.DECIDE)) is not None:
        raise ReachabilityRefused(refusal.code, refusal.message, refusal.kind)
    until = _until(session, settings, submission)
    if system_dir not in until:
        raise ReachabilityRefused(
            "not-con",
            f"{system_dir!r} is no Standardized client-over-network system of this submission",
            Kind.INVALID,
        )
    if checked_on > review_clock(settings).local_date(at):
        raise ReachabilityRefused(
            "future", "a check is recorded once it has happened", Kind.INVALID
        )
    if not detail.strip():
        raise ReachabilityRefused("detail-required", "say how it was checked", Kind.INVALID)
    check = ReachabilityCheck(
        submission_id=submission.id, system_dir=system_dir, reachable=reachable,
        detail=detail.strip(), checked_on=checked_on, recorded_by=who.email, recorded_at=at,
    )  # fmt: skip
    session.add(check)
    said = f"{system_dir}: {'reachable' if reachable else 'unreachable'} on {checked_on}"
    record(session, submission, action="endpoint check", actor=who.email,
           reason=f"{said}: {check.detail}", at=at)  # fmt: skip
    problem = None if reachable else unreachable_problem(until[system_dir], checked_on)
    if problem is not None:
        notify(session, [*chairs(session), *members_of(session, submission.organization_id)],
               f"Endpoint unreachable: {submission.organization.name} "
               f"submission {submission.public_id[:8]}", problem,
               f"/submissions/{submission.public_id}#standing")  # fmt: skip
    session.flush()
    return check
