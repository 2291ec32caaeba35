"""The lifecycle's rules (``app.review.domain.policy``) asked about stored submissions and people:
the facts a predicate needs, and a refusal turned into the services' error."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.lifecycle import PublicationMode, SubmissionState
from app.core.refusals import Refusal, Refused
from app.db.models import Publication, Submission
from app.review.domain.policy import SubmissionFacts


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
