"""What a submission's page follows while work runs: a small, typed status resource.

The page is rendered once from the full view; while the checks, a re-count or a
reproduction runs, its script asks only this (a few fields, polled) and reloads the page
when something finished.
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Reproduction, Retokenization, Submission
from app.jobs.views import JobView
from app.submissions.services.views import checks_finished, state_label


class SubmissionStatus(BaseModel):
    id: str
    state: str
    state_label: str
    finished: bool = Field(description="the automated checks are over (passed or not)")
    verdict: str | None
    job: JobView | None = Field(description="the latest check job")
    recounts_running: int = Field(description="re-counts queued or running")
    reproductions_running: int = Field(description="reproductions queued or running")


def _running(session: Session, model: type[Reproduction] | type[Retokenization], sid: int) -> int:
    query = select(func.count()).where(model.submission_id == sid, model.finished_at.is_(None))
    return int(session.scalar(query) or 0)


def submission_status(session: Session, submission: Submission) -> SubmissionStatus:
    job = submission.jobs[-1] if submission.jobs else None
    return SubmissionStatus(
        id=submission.public_id,
        state=submission.state,
        state_label=state_label(submission),
        finished=checks_finished(submission),
        verdict=submission.verdict,
        job=JobView.model_validate(job) if job is not None else None,
        recounts_running=_running(session, Retokenization, submission.id),
        reproductions_running=_running(session, Reproduction, submission.id),
    )
