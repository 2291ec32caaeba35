"""Rules §11.9 applied to a principal and a stored submission (the rule itself is in
``app.submissions.domain.visibility``); every page and API endpoint asks here."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.core.authorization import Scope
from app.db.models import Publication, Submission
from app.submissions.domain.visibility import Access, Viewer, access


def submitting_organization(session: Session, organization_id: int | None) -> bool:
    """Whether the organisation has uploaded a submission for review (rules §11.9)."""
    if organization_id is None:
        return False
    found = session.scalar(
        select(Submission.id)
        .where(Submission.organization_id == organization_id, Submission.for_review.is_(True))
        .limit(1)
    )
    return found is not None


def viewer_of(
    session: Session, who: Principal | None, submission: Submission | None = None
) -> Viewer:
    """The committee and the chair (the review scope) and the submission's own
    organisation see everything of it; members of other submitting organisations see
    results, code and artifacts; a token without the submit or review scope, or a member
    of an organisation that never submitted, sees what the public sees."""
    if who is None:
        return Viewer.PUBLIC
    if who.has(Scope.REVIEW):
        return Viewer.MEMBER
    if not who.has(Scope.SUBMIT) or who.organization_id is None:
        return Viewer.PUBLIC
    if submission is not None and submission.organization_id == who.organization_id:
        return Viewer.MEMBER
    if submitting_organization(session, who.organization_id):
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
