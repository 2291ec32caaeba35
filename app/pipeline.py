"""The flows that cross features, above them all.

A submission's checks pass, and then review starts its clocks and the points with run
events are queued for re-counting: the checks feature knows none of that, it only calls
what it is given after a pass (``after_pass``). Here the flow is put together, and with
it the registry of every kind of background job the features declare, which the worker
and the job recovery read.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy.orm import Session

from app.checks.domain.compliance import ComplianceResult
from app.checks.domain.findings import Finding
from app.checks.services.checks import check_submission, fail_check
from app.core.times import Clock
from app.db.models import Job, Submission, utcnow
from app.jobs.kinds import JobKind, registry
from app.jobs.queue import CHECK_SUBMISSION, JobQueue
from app.publishing.services.standing_findings import standing_findings
from app.review.services.corrections import (
    CHECK_CORRECTION,
    fail_correction_check,
    run_correction_check,
)
from app.review.services.review import on_checks_passed
from app.runs.services.jobs import RUNS_JOB_KINDS
from app.runs.services.retokenization import request_retokenization
from app.settings import Settings
from app.submission_api.services.findings import bundle_findings
from app.submission_api.services.receiving import SUBMISSION_API_JOB_KINDS
from app.submissions.services.extracted import bundle_folder


def after_checks_passed(
    session: Session,
    settings: Settings,
    submission: Submission,
    at: dt.datetime,
    queue: JobQueue | None,
) -> None:
    """Review's clocks start (rules §11.2); with a *queue*, the points whose bundle
    carries run events are re-counted next."""
    on_checks_passed(session, settings, submission, at)
    if queue is not None:
        request_retokenization(session=session, queue=queue, submission=submission)


def run_checks(
    *,
    session: Session,
    settings: Settings,
    job_id: int,
    clock: Clock = utcnow,
    queue: JobQueue | None = None,
) -> Job | None:
    """A check job, with what a pass leads to, and the rules of the features above the
    checks: a bundle composed from runs (the Submission API's) and the declared standing
    (publishing's)."""

    def more_findings(
        session: Session, submission: Submission, root: Path, result: ComplianceResult
    ) -> list[Finding]:
        return bundle_findings(session, submission, root, result) + standing_findings(
            session, settings, submission, result, clock()
        )

    return check_submission(
        session=session,
        settings=settings,
        job_id=job_id,
        clock=clock,
        queue=queue,
        bundle_folder=bundle_folder,
        after_pass=after_checks_passed,
        more_findings=more_findings,
    )


JOB_KINDS: dict[str, JobKind] = registry(
    JobKind(CHECK_SUBMISSION, "checking", run_checks, fail_check, verdict=True),
    JobKind(
        CHECK_CORRECTION,
        "checking a correction",
        run_correction_check,
        fail_correction_check,
        verdict=True,
    ),
    *RUNS_JOB_KINDS,
    *SUBMISSION_API_JOB_KINDS,
)
