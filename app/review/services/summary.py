"""Where a submission's review stands, as its page and the API tell it, and the
reviewer's queue."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.core.lifecycle import (
    PublicationMode,
    ReviewPhase,
)
from app.core.views import Timestamp
from app.db.models import (
    Submission,
)
from app.publishing.services.embargo import embargo_release
from app.review.services.review import blocking_objections, first_released_cohort
from app.settings import Settings, review_clock
from app.submissions.services.views import SubmissionSummary, summary_fields


class ReviewSummary(BaseModel):
    """Where a submission's review stands: phase, windows, reviewer, penalties, the
    publication plan (rules §4.2, §4.4, §11.2)."""

    phase: ReviewPhase | None
    publication_mode: PublicationMode
    embargo_date: dt.date | None
    eligible_at: Timestamp | None = Field(description="when review began (its cohort)")
    peer_review_closes: Timestamp | None
    resolution_closes: Timestamp | None
    reviewer: str | None
    review_completed_at: Timestamp | None
    submitted_by: str | None
    open_objections: int = Field(description="open objections that block finalization")
    penalty_cohorts: int
    due_cohort: str | None
    published_in: str | None = Field(description="the first released cohort that showed it")
    embargo_release: dt.date | None
    review_starts_with: str | None = Field(description="awaiting review: what starts it")


def review_summary(session: Session, settings: Settings, submission: Submission) -> ReviewSummary:
    clock = review_clock(settings)
    eligible = submission.review_eligible_at
    open_ones = blocking_objections(session, submission) if eligible else []
    release = embargo_release(settings, submission)
    return ReviewSummary(
        phase=submission.review_phase,
        publication_mode=submission.publication_mode,
        embargo_date=submission.embargo_date,
        eligible_at=eligible,
        peer_review_closes=clock.peer_review_closes(eligible) if eligible else None,
        resolution_closes=clock.resolution_closes(eligible) if eligible else None,
        reviewer=submission.reviewer.email if submission.reviewer else None,
        review_completed_at=submission.review_completed_at,
        submitted_by=submission.submitted_by.email if submission.submitted_by else None,
        open_objections=len(open_ones),
        penalty_cohorts=submission.penalty_cohorts,
        due_cohort=submission.due_cohort,
        # Only a cohort the chair has released has published anything.
        published_in=first_released_cohort(session, submission),
        embargo_release=release,
        # Awaiting review: what starts it (the provisional publication, rules §11.2 C).
        review_starts_with=None
        if submission.review_phase != ReviewPhase.AWAITING.value
        else (
            f"its embargo ends on {release.isoformat()}"
            if release
            else f"cohort {submission.eligible_cohort or submission.target_cohort} is published"
        ),
    )


class QueuedSubmission(SubmissionSummary):
    """A submission in the review queue."""

    review: ReviewSummary
    assigned_to_me: bool = Field(description="the caller is its reviewer")
    systems: list[str] = Field(description="the systems it submits, by name")


def review_queue(
    session: Session, settings: Settings, submissions: Sequence[Submission], user_id: int | None
) -> list[QueuedSubmission]:
    return [
        QueuedSubmission.model_validate(
            {
                **summary_fields(s, settings),
                "review": review_summary(session, settings, s),
                "assigned_to_me": s.reviewer_id == user_id,
                "systems": [system.system_name or system.dir_name for system in s.systems],
            }
        )
        for s in submissions
    ]
