"""Rules §11.9 applied to a principal and stored submissions (the rule itself is in
``app.submissions.domain.visibility``); every page and API endpoint asks here, for one
submission (:func:`access_to`) or for a listing (:func:`visible_clause`), and the two are
tested against each other over every listing."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, true
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.authorization import Scope
from app.core.lifecycle import SubmissionState
from app.db.models import Organization, Publication, Submission
from app.submissions.domain.visibility import (
    REVIEW_WEEKS,
    Access,
    Viewer,
    access,
    in_review_weeks,
)


def review_weeks_clause() -> Any:
    """:func:`in_review_weeks` as SQL, over ``Submission``."""
    return (
        Submission.for_review.is_(True)
        & (Submission.state == SubmissionState.PASSED_CHECKS)
        & Submission.review_phase.in_(sorted(REVIEW_WEEKS))
    )


def submitting_organization(session: Session, organization_id: int | None) -> bool:
    """Whether the organisation is a submitting organisation now (rules §11.9): one of its
    submissions for review passed its checks and is in its review weeks."""
    if organization_id is None:
        return False
    found = session.scalar(
        select(Submission.id)
        .where(Submission.organization_id == organization_id, review_weeks_clause())
        .limit(1)
    )
    return found is not None


def _member_of(who: Principal | None) -> int | None:
    """The organisation *who* acts for: a holder of the submit scope, with one."""
    if who is None or not who.has(Scope.SUBMIT):
        return None
    return who.organization_id


def viewer_of(session: Session, who: Principal | None, submission: Submission) -> Viewer:
    """The committee and the chair (the review scope) and the submission's own
    organisation see everything of it; a member of another submitting organisation sees
    its results, code and artifacts while both are in their review weeks; everyone else
    sees what the public sees."""
    if who is not None and who.has(Scope.REVIEW):
        return Viewer.MEMBER
    organization = _member_of(who)
    if organization is None:
        return Viewer.PUBLIC
    if submission.organization_id == organization:
        return Viewer.MEMBER
    if in_review_weeks(
        SubmissionState(submission.state), submission.for_review, submission.review_phase
    ) and submitting_organization(session, organization):
        return Viewer.PEER
    return Viewer.PUBLIC


def public_status(session: Session, submission: Submission) -> str | None:
    return session.scalar(
        select(Publication.status)
        .where(Publication.submission_id == submission.id, Publication.in_record())
        .order_by(Publication.cohort.desc(), Publication.id.desc())
        .limit(1)
    )


def access_to(session: Session, who: Principal | None, submission: Submission) -> Access:
    viewer = viewer_of(session, who, submission)
    if viewer == Viewer.PUBLIC:
        return access(viewer, public_status(session, submission))
    return access(viewer, None)


def visible_clause(session: Session, who: Principal | None) -> Any:
    """Which submissions *who* may see at all, as SQL over ``Submission``: exactly those
    :func:`access_to` does not answer NONE for."""
    if who is not None and who.has(Scope.REVIEW):
        return true()
    published = Submission.id.in_(select(Publication.submission_id).where(Publication.in_record()))
    organization = _member_of(who)
    if organization is None:
        return published
    clause = published | (Submission.organization_id == organization)
    if submitting_organization(session, organization):
        clause = clause | review_weeks_clause()
    return clause


def organizations_clause(session: Session, who: Principal | None) -> Any:
    """Which organisations *who* may know of, as SQL over ``Organization``: those of the
    submissions :func:`visible_clause` admits, and *who*'s own."""
    if who is not None and who.has(Scope.REVIEW):
        return true()
    seen = Organization.id.in_(
        select(Submission.organization_id).where(visible_clause(session, who))
    )
    if who is not None and who.organization_id is not None:
        return seen | (Organization.id == who.organization_id)
    return seen
