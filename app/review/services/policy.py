"""The lifecycle's rules (``app.review.domain.policy``) asked about stored submissions and people:
the facts a predicate needs, and a refusal turned into the services' error."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.domain import Role, Scope
from app.accounts.services.accounts import Principal
from app.core.lifecycle import PublicationMode, SubmissionState
from app.core.refusals import Refusal, Refused
from app.db.models import Publication, Submission, User
from app.review.domain.policy import Actor, SubmissionFacts

CHAIR_ROLES = (Role.CHAIR.value, Role.ADMIN.value)
COMMITTEE_ROLES = (Role.REVIEWER.value, *CHAIR_ROLES)


class PolicyError(Refused):
    pass


def enforce(refusal: Refusal | None) -> None:
    if refusal is not None:
        raise PolicyError(refusal.code, refusal.message, refusal.kind)


def facts_of(session: Session, submission: Submission) -> SubmissionFacts:
    published = session.scalar(
        select(Publication.id)
        .where(Publication.submission_id == submission.id, Publication.in_record())
        .limit(1)
    )
    return SubmissionFacts(
        state=SubmissionState(submission.state),
        for_review=submission.for_review,
        mode=PublicationMode(submission.publication_mode),
        review_started=submission.review_eligible_at is not None,
        finalized_at=submission.finalized_at,
        eligible_at=submission.review_eligible_at,
        published=published is not None,
    )


def actor_of(who: Principal | User | None, submission: Submission) -> Actor:
    """A signed-in principal (its scopes) or a user (its role), as the rules see them."""
    if who is None:
        return Actor()
    if isinstance(who, Principal):
        chair = who.has(Scope.PUBLISH)
        committee = who.has(Scope.REVIEW) and who.organization_id is not None
    else:
        chair = who.role in CHAIR_ROLES
        committee = who.role in COMMITTEE_ROLES and who.organization_id is not None
    own = who.organization_id is not None and who.organization_id == submission.organization_id
    return Actor(chair=chair, own_organization=own, committee=committee)
