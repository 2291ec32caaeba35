"""The review clock and the embargo release date, from the settings (rules §4.2, §11.3)."""

from __future__ import annotations

import datetime as dt

from app.db.models import Submission
from app.domain.cohorts import BusinessCalendar, Cohort
from app.domain.lifecycle import PublicationMode
from app.domain.review import ReviewClock, ReviewRules
from app.settings import Settings


def business_calendar(settings: Settings) -> BusinessCalendar:
    return BusinessCalendar.of(
        settings.cohort_timezone, settings.holidays, settings.cohort_cutoff_business_days
    )


def review_clock(settings: Settings) -> ReviewClock:
    return ReviewClock(
        business_calendar(settings),
        ReviewRules(
            peer_review_days=settings.peer_review_days,
            resolution_days=settings.resolution_days,
            submitter_business_days=settings.submitter_response_business_days,
            objector_business_days=settings.objector_response_business_days,
            embargo_max_days=settings.embargo_max_days,
        ),
    )


def embargo_release(settings: Settings, submission: Submission) -> dt.date | None:
    """When a finalized confidential result is held for its embargo (rules §4.2 B), the
    date it is released; None when it follows the cohort schedule."""
    if (
        submission.publication_mode != PublicationMode.CONFIDENTIAL
        or submission.embargo_date is None
        or submission.finalized_at is None
    ):
        return None
    clock = review_clock(settings)
    release = clock.embargo_release(submission.embargo_date, submission.finalized_at)
    if release <= clock.local_date(submission.finalized_at):
        return None  # the embargo passed while the review was running: next cohort
    due = Cohort.parse(submission.due_cohort or "")
    if due is not None and submission.penalty_cohorts and due.date > release:
        release = due.date  # the penalties' delay holds too
    return release
