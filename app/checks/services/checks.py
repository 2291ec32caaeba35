"""run_checks: the automated (Week 0) compliance checks of one submission.

Idempotent: a job that already finished is left alone, and a job that is run again
(its worker died, the message came back) starts over and replaces what an earlier
attempt wrote, all in one transaction, so a submission never shows half a result.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.audit import change_state
from app.checks.domain.compliance import (
    ComplianceResult,
    EarlierUpload,
    Registries,
    run_compliance,
    with_findings,
)
from app.checks.domain.compliance.official import ParsedPoint
from app.checks.domain.datasets import catalogue
from app.checks.domain.findings import Finding, Severity, Verdict
from app.checks.services.findings import record_findings
from app.core.lifecycle import JobState, SubmissionState
from app.core.times import Clock
from app.db.models import Curve, Job, Point, Submission, System, utcnow
from app.jobs.queue import (
    CHECK_SUBMISSION,
    JobQueue,
    claim_job,
    enqueue_after_commit,
    mark_succeeded,
    set_progress,
)
from app.settings import Settings, business_calendar
from app.storage import ObjectRefused, StorageError, StoreUnavailable

log = logging.getLogger(__name__)


def _earlier_uploads(session: Session, submission: Submission) -> list[EarlierUpload]:
    rows = session.scalars(
        select(Submission)
        .where(Submission.content_digest == submission.content_digest)
        .where(Submission.id < submission.id)
        .order_by(Submission.id)
    ).all()
    return [EarlierUpload(reference=row.public_id, uploaded_at=row.uploaded_at) for row in rows]


def store_results(session: Session, submission: Submission, result: ComplianceResult) -> None:
    """Replace the submission's systems, curves and points with this run's; a point keeps
    the state it was given (a withdrawal stays a withdrawal, rules §11.7)."""
    kept = {
        (c.system.dir_name, c.benchmark_model, p.dir_name): (p.state, p.state_reason)
        for c in submission.curves
        for p in c.points
        if p.state != "active"
    }
    session.execute(delete(Curve).where(Curve.submission_id == submission.id))
    session.execute(delete(System).where(System.submission_id == submission.id))
    session.flush()
    session.expire(submission, ["systems", "curves"])
    systems: dict[str, System] = {}
    for parsed in result.official.systems:
        system = System(
            submission=submission,
            dir_name=parsed.dir_name,
            system_name=parsed.system_name,
            shortened_name=parsed.shortened_name,
            division=parsed.division,
            availability=parsed.availability,
            accelerator_model=parsed.accelerator_model,
            accelerator_count=_bigint(parsed.accelerator_count),
            node_count=_bigint(parsed.node_count),
            serving_framework=parsed.serving_framework,
            provisioned_power_kw=parsed.provisioned_power_kw,
            target_availability_date=parsed.target_availability_date,
            power_estimates=parsed.power_estimates or None,
        )
        session.add(system)
        systems[parsed.dir_name] = system
    for parsed_curve in result.official.curves:
        curve_system = systems.get(parsed_curve.system)
        if curve_system is None:
            continue
        curve = Curve(
            submission=submission,
            system=curve_system,
            benchmark_model=parsed_curve.model,
            dataset=parsed_curve.dataset,
            is_agentic=parsed_curve.is_agentic,
            c_max=_bigint(parsed_curve.c_max),
            c_min=_bigint(parsed_curve.c_min),
            c_min_overridden=parsed_curve.c_min_overridden,
            regions=parsed_curve.regions,
        )
        session.add(curve)
        for p in parsed_curve.points:
            curve.points.append(_point_row(p))
            state = kept.get((parsed_curve.system, parsed_curve.model, p.dir_name))
            if state is not None:
                curve.points[-1].state, curve.points[-1].state_reason = state


def _point_row(p: ParsedPoint) -> Point:
    """A point as the official checker parsed it, as the database keeps it: every metric
    finite or absent, every count within a BIGINT."""
    return Point(
        dir_name=p.dir_name,
        concurrency=_bigint(p.concurrency),
        region=p.region,
        declared_region=p.declared_region,
        offline_kind=p.offline,
        load_pattern=p.load_pattern,
        system_tps=_finite(p.system_tps) or 0.0,
        tps_per_user=_finite(p.tps_per_user),
        tpot_p90_ms=_finite(p.tpot_p90_ms),
        ttft_p90_ms=_finite(p.ttft_p90_ms),
        e2e_avg_interactivity=_finite(p.e2e_avg_interactivity),
        system_tps_per_kw=_finite(p.system_tps_per_kw),
        point_power_kw=_finite(p.point_power_kw),
        engaged_share=p.engaged_share,
        accelerators_engaged=p.accelerators_engaged,
        n_samples_completed=_bigint(p.n_samples_completed),
        n_samples_issued=_bigint(p.n_samples_issued),
        n_samples_failed=_bigint(p.n_samples_failed),
        duration_ms=_finite(p.duration_ms) or 0.0,
        total_output_tokens=_bigint(p.total_output_tokens),
        accuracy_status=p.accuracy,
        percentiles=p.percentiles or None,
        finish_reason_counts=p.finish_reason_counts,
        input_sequence_lengths=(
            p.input_sequence_lengths.model_dump(exclude_none=True)
            if p.input_sequence_lengths
            else None
        ),
        early_stopping=p.early_stopping,
        run_config=p.run_config,
        accuracy_detail=(p.accuracy_detail.model_dump(mode="json") if p.accuracy_detail else None),
        target_cohort=p.target_cohort,
        seed_set=p.seed_set,
    )


_BIGINT_MAX = 2**63 - 1


def _finite(value: float | None) -> float | None:
    """Derived values may still divide by zero: a stored metric is finite or absent."""
    return value if value is not None and math.isfinite(value) else None


def _bigint(value: int | None) -> int | None:
    """Counts past 2^63 may pass the readable-files rule (it allows 128 bits) but
    not a BIGINT column: they are kept at its bound, and the checks judge the value."""
    return None if value is None else max(-_BIGINT_MAX, min(_BIGINT_MAX, value))


# What follows a pass, in the same transaction: (session, settings, submission, at, queue).
# The flow across features (review's clocks, the re-counts) is app.pipeline's, not ours.
AfterPass = Callable[[Session, Settings, Submission, dt.datetime, JobQueue | None], None]
# Where the submission's files are on this host: the store's errors when they cannot be
# read (app.submissions.services.extracted, given by app.pipeline).
BundleFolder = Callable[[Settings, Submission], Path]
# Rules a feature above adds for some submissions (the Submission API's, for a bundle
# composed from runs), with the facts it keeps: given by app.pipeline.
# The findings of rules that live above the checks (the Submission API's, the standing's):
# they read the bundle's root and what the official checker made of it.
MoreFindings = Callable[[Session, Submission, Path, ComplianceResult], list[Finding]]


def check_submission(
    *,
    session: Session,
    settings: Settings,
    job_id: int,
    clock: Clock = utcnow,
    queue: JobQueue | None = None,
    bundle_folder: BundleFolder,
    after_pass: AfterPass | None = None,
    more_findings: MoreFindings | None = None,
) -> Job | None:
    """Run the checks of a job's submission, read from *bundle_folder* (the submission's
    files on this host); *after_pass* is what a pass leads to."""
    job = session.get(Job, job_id)
    if job is None or job.state in (JobState.SUCCEEDED, JobState.FAILED):
        return job
    submission = job.submission
    if submission is None:
        raise ValueError(f"check job {job_id} has no submission")

    if not claim_job(session, job, stale_after_s=settings.job_stale_after_s, now=clock()):
        return job  # another worker runs it
    # Starting (or restarting after a lost worker) is committed at once: the page shows it.
    change_state(session, submission, SubmissionState.CHECKING, action="checks started", at=clock())
    set_progress(session, job, "running the official checker", 0.1)

    checked_archive = submission.archive_id
    try:
        root = bundle_folder(settings, submission)
    except StoreUnavailable:
        raise  # not now: the job waits for the store and runs again (worker.tasks)
    except StorageError as exc:  # the archive is gone or damaged: no later run reads it
        fail_check(session=session, job=job, reason=_unreadable(exc, submission), clock=clock)
        return job

    result = official_checks(settings, root, clock(), _earlier_uploads(session, submission))
    if more_findings is not None:
        result = with_findings(result, more_findings(session, submission, root, result))
    set_progress(session, job, "storing findings and results", 0.8)

    finished = clock()
    session.refresh(submission, ["archive_id"])
    if submission.archive_id != checked_archive:
        # The bundle was replaced while this check ran: its outcome is of a bundle the
        # submission no longer has, and the check the replacement queued decides.
        mark_succeeded(job, finished)
        session.commit()
        return job
    passed = _keep_outcome(session, submission, job, result, finished)
    mark_succeeded(job, finished)
    if passed and after_pass is not None:
        after_pass(session, settings, submission, finished, queue)
    session.commit()
    return job


def _unreadable(exc: StorageError, submission: Submission) -> str:
    """Why the stored archive cannot be checked, in words for the submitter: the portal's
    own refusal as it is; a store's words (its address, its paths) for the operator's
    log only."""
    if isinstance(exc, ObjectRefused):
        return str(exc)
    log.error("submission %s: its stored archive cannot be read: %s", submission.public_id, exc)
    return "the stored archive is missing or damaged; the operator has been told"


def _keep_outcome(
    session: Session,
    submission: Submission,
    job: Job,
    result: ComplianceResult,
    finished: dt.datetime,
) -> bool:
    """The findings, the systems, curves and points, and the verdict with the state it
    leads to; True when the submission passed."""
    record_findings(
        session,
        submission_id=submission.id,
        job_id=job.id,
        kind="compliance",
        version=result.checker_version,
        findings=result.findings,
        at=finished,
    )
    store_results(session, submission, result)
    passed = result.verdict == Verdict.PASSED
    change_state(
        session,
        submission,
        SubmissionState.PASSED_CHECKS if passed else SubmissionState.REJECTED,
        action="automated checks",
        reason=f"{sum(f.severity == Severity.ERROR for f in result.findings)} error(s) "
        f"(endpoints-submission-cli {result.checker_version})",
        at=finished,
    )
    submission.verdict = result.verdict
    submission.checker_version = result.checker_version
    cohorts = sorted({p.target_cohort for p in result.official.points if p.target_cohort})
    submission.target_cohort = cohorts[0] if cohorts else None
    submission.eligible_cohort = (
        str(result.eligible_cohort) if passed and result.eligible_cohort else None
    )
    submission.checks_finished_at = finished
    submission.error_message = None
    return passed


def fail_check(*, session: Session, job: Job, reason: str, clock: Clock = utcnow) -> None:
    """The check could not run at all: say why, and let it be retried."""
    job.state = JobState.FAILED
    job.error = reason
    job.finished_at = clock()
    submission = job.submission
    if submission is not None:
        if submission.state == SubmissionState.RECEIVED:
            change_state(session, submission, SubmissionState.CHECKING, action="checks started")
        if submission.state == SubmissionState.CHECKING:
            change_state(
                session,
                submission,
                SubmissionState.CHECK_ERROR,
                action="checks could not run",
                reason=reason,
            )
            submission.error_message = reason
    session.commit()


def retry_check(*, session: Session, queue: JobQueue, submission: Submission) -> Job:
    """Queue a new check of *submission* (after a check error, or to re-check)."""
    job = Job(kind=CHECK_SUBMISSION, submission=submission)
    session.add(job)
    session.flush()
    enqueue_after_commit(session, queue, job)
    return job


def official_checks(
    settings: Settings,
    root: Path,
    at: dt.datetime,
    earlier_uploads: list[EarlierUpload] | None = None,
) -> ComplianceResult:
    """The compliance checks of the bundle at *root* at *at*, in the context the portal
    is configured with (its calendar, the seed-set and drafter lists, the datasets)."""
    return run_compliance(
        root,
        evaluated_at=at,
        calendar=business_calendar(settings),
        earlier_uploads=earlier_uploads,
        registries=checker_registries(settings),
        datasets=catalogue(settings.extra_datasets),
    )


def checker_registries(settings: Settings) -> Registries:
    """The seed-set and drafter lists the official checker reads, as configured."""
    return Registries(
        seed_sets=settings.seed_sets_file, approved_drafters=settings.approved_drafters_file
    )
