"""When an embargo releases a finalized confidential result (rules §4.2 B)."""

from __future__ import annotations

import datetime as dt

from app.core.cohorts import Cohort
from app.core.lifecycle import PublicationMode
from app.db.models import Submission
from app.settings import Settings, review_clock


def embargo_release(settings: Settings, submission: Submission) -> dt.date | None:
    """When a finalized confidential result is held for its embargo, the date it is
    released; None when it follows the cohort schedule."""
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
