"""A submission as lists and the API summarise it, and how it is found."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from app.core.findings import Verdict
from app.core.lifecycle import (
    FINISHED,
    PublicationMode,
    ResultStatus,
    SubmissionState,
    result_status,
    status_badge,
)
from app.core.views import Timestamp
from app.db.models import CheckRun, Curve, Submission
from app.jobs.views import JobView
from app.settings import Settings, review_policy

STATE_LABELS = {
    "received": "Received, waiting for a worker",
    "checking": "Checking",
    "rejected": "Rejected by the automated checks",
    "passed_checks": "Passed the automated checks",
    "check_error": "The checks could not run",
    "finalized": "Finalized by peer review",
    "withdrawn": "Withdrawn",
    "invalidated": "Invalidated",
}


def get_submission(session: Session, public_id: str) -> Submission | None:
    return session.scalar(
        select(Submission)
        .where(Submission.public_id == public_id)
        .options(
            selectinload(Submission.curves).selectinload(Curve.points),
            selectinload(Submission.systems),
            selectinload(Submission.jobs),
            selectinload(Submission.organization),
            selectinload(Submission.archive),
        )
    )


def list_submissions(
    session: Session, visible: Any, limit: int = 100, offset: int = 0
) -> tuple[list[Submission], int]:
    """The submissions the *visible* clause admits (``visibility.visible_clause``, the one
    rule of rules §11.9), newest first, with how many there are."""
    query = select(Submission).where(visible)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(
        query.options(selectinload(Submission.organization))
        .order_by(Submission.id.desc())
        .limit(limit)
        .offset(offset)
    ).all()
    return list(rows), total


def latest_check_run(session: Session, submission: Submission) -> CheckRun | None:
    return session.scalar(
        select(CheckRun)
        .where(CheckRun.submission_id == submission.id, CheckRun.kind == "compliance")
        .order_by(CheckRun.id.desc())
        .options(selectinload(CheckRun.findings))
        .limit(1)
    )


def state_label(submission: Submission) -> str:
    return STATE_LABELS.get(submission.state, submission.state)


def checks_finished(submission: Submission) -> bool:
    """The automated checks are over (passed, rejected or failed)."""
    return SubmissionState(submission.state) in FINISHED


class SubmissionSummary(BaseModel):
    """A submission in a list: what it is, where its checks stand, its status."""

    id: str = Field(description="the portal's id of the upload")
    organization: str
    bundle_submission_id: str | None = Field(description="the id the bundle gives itself")
    original_filename: str
    archive_sha256: str
    archive_size: int
    state: SubmissionState
    state_label: str
    finished: bool = Field(description="the automated checks are over (passed or not)")
    for_review: bool = Field(description="false: an unverified result, never reviewed")
    publication_mode: PublicationMode
    result_status: ResultStatus | None = Field(description="the status its results carry")
    status_badge: str | None = Field(
        description="what pages show: the status, or 'confidential' for a result in "
        "confidential review (never called provisional; 'unverified' where the review "
        "policy's [statuses] reads the word so), 'finalized' for one finalized but not yet "
        "published (verified once a cohort publishes it), or 'unlisted' for an upload "
        "outside review that the policy keeps off the record"
    )
    verdict: Verdict | None
    checker_version: str | None
    target_cohort: str | None
    eligible_cohort: str | None
    error: str | None = Field(description="why the checks could not run")
    uploaded_at: Timestamp
    checks_finished_at: Timestamp | None
    job: JobView | None = Field(description="the latest check job")


def summary_fields(submission: Submission, settings: Settings) -> dict[str, object]:
    """A submission's summary as keyword arguments, for the read models that extend it."""
    job = submission.jobs[-1] if submission.jobs else None
    return {
        "id": submission.public_id,
        "organization": submission.organization.name,
        "bundle_submission_id": submission.bundle_submission_id,
        "original_filename": submission.original_filename,
        "archive_sha256": submission.archive.sha256,
        "archive_size": submission.archive.size,
        "state": submission.state,
        "state_label": state_label(submission),
        "finished": checks_finished(submission),
        "for_review": submission.for_review,
        "publication_mode": submission.publication_mode,
        "result_status": result_status(SubmissionState(submission.state), submission.for_review),
        "status_badge": status_badge(
            SubmissionState(submission.state),
            submission.for_review,
            PublicationMode(submission.publication_mode),
            {version.status for version in submission.record_versions},
            review_policy(settings).statuses,
        ),
        "verdict": submission.verdict,
        "checker_version": submission.checker_version,
        "target_cohort": submission.target_cohort,
        "eligible_cohort": submission.eligible_cohort,
        "error": submission.error_message,
        "uploaded_at": submission.uploaded_at,
        "checks_finished_at": submission.checks_finished_at,
        "job": None if job is None else JobView.model_validate(job),
    }


def submission_summary(submission: Submission, settings: Settings) -> SubmissionSummary:
    return SubmissionSummary.model_validate(summary_fields(submission, settings))


def links_of(public_id: str) -> dict[str, str]:
    return {
        "self": f"/api/v1/submissions/{public_id}",
        "findings": f"/api/v1/submissions/{public_id}/findings",
        "page": f"/submissions/{public_id}",
    }


class UploadedSubmission(SubmissionSummary):
    duplicate: bool = Field(description="the same archive was uploaded before")
    links: dict[str, str]


def uploaded_submission(
    submission: Submission, duplicate: bool, settings: Settings
) -> UploadedSubmission:
    return UploadedSubmission.model_validate(
        {
            **summary_fields(submission, settings),
            "duplicate": duplicate,
            "links": links_of(submission.public_id),
        }
    )
