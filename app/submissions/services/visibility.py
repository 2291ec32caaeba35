"""Rules §11.9 applied to a principal and a stored submission (the rule itself is in
``app.submissions.domain.visibility``); every page and API endpoint asks here."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.domain import Scope
from app.accounts.services.accounts import Principal
from app.db.models import Publication, Submission
from app.submissions.domain.visibility import Access, Viewer, access


def viewer_of(who: Principal | None) -> Viewer:
    """Signed-in members of submitting organisations and the committee see everything;
    a token without the submit or review scope sees what the public sees."""
    if who is not None and (who.has(Scope.SUBMIT) or who.has(Scope.REVIEW)):
        return Viewer.MEMBER
    return Viewer.PUBLIC


def public_status(session: Session, submission: Submission) -> str | None:
    return session.scalar(
        select(Publication.status)
        .where(Publication.submission_id == submission.id, Publication.in_record())
        .order_by(Publication.cohort.desc(), Publication.id.desc())
        .limit(1)
    )


def access_to(session: Session, who: Principal | None, submission: Submission) -> Access:
    viewer = viewer_of(who)
    if viewer == Viewer.MEMBER:
        return access(viewer, None)
    return access(viewer, public_status(session, submission))
