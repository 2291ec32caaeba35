"""A submission as the one asking may see it or act on it: the one place a route loads a
submission by its public id (404 when there is none or it may not be seen)."""

from __future__ import annotations

from fastapi import HTTPException, Request
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import authorize
from app.accounts.web.security import signed_in, signed_in_as
from app.core.authorization import Action
from app.db.models import Submission
from app.submissions.domain.visibility import Access
from app.submissions.services.views import get_submission
from app.submissions.services.visibility import access_to


def submission_or_404(session: Session, public_id: str) -> Submission:
    submission = get_submission(session, public_id)
    if submission is None:
        raise HTTPException(404, detail=f"no submission with id {public_id!r}")
    return submission


def acting_on(
    session: Session, who: Principal | None, public_id: str, action: Action
) -> Submission:
    """The submission, if *who* may take *action* on it (the one rule,
    ``app.core.authorization``): 401 for nobody signed in, 404 when *who* may not even
    see it, 403 (the rule's refusal) otherwise. Every state-changing route asks here."""
    submission = visible_submission(session, signed_in(who), public_id)
    authorize(who, submission, action)
    return submission


def visible_submission(
    session: Session, who: Principal | None, public_id: str, need: Access = Access.RESULTS
) -> Submission:
    """The submission if *who* may see it to the *need* level (rules §11.9): 404 when it
    is not public at all, 403 when only its results are."""
    submission = submission_or_404(session, public_id)
    level = access_to(session, who, submission)
    if level == Access.NONE:
        raise HTTPException(404, detail=f"no submission with id {public_id!r}")
    if level < need:
        raise HTTPException(
            403,
            detail="findings, code and artifacts of a result in peer review are seen by the "
            "committee and the submitting organisations only (rules §11.9); sign in",
        )
    return submission


def member_submission(request: Request, session: Session, public_id: str) -> Submission:
    """For the page's forms: a signed-in member who may see the whole submission."""
    who = signed_in_as(request)
    return visible_submission(session, who, public_id, Access.REVIEW)
