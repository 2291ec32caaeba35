"""Corrections of a submission's non-result content (rules §11.7).

The submitting organisation uploads a new bundle for its submission. Its archive is read
in the reading child like any upload (hostile input never in the web process) and its
files compared with the submission's: every point's result files must be the submitted
ones byte for byte, less the points withdrawn (``app.review.domain.corrections``); a
refusal names the files. The bundle then goes through the official checks in a worker
(``CHECK_CORRECTION``). In review a correction that passes replaces the submission's
archive, disclosures and systems at once (the points keep their states, the review its
clocks); after finalization it waits for the chair, whose approval has the checks run
again and applies it with a new version of the public record and a line in the
result's public change log. The submission is never left half corrected: a correction
that fails is refused and the submission keeps its bundle.
"""

from __future__ import annotations

import datetime as dt
import logging

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import chairs, members_of, notify
from app.audit import policy_in_force, record
from app.checks.domain.compliance import ComplianceResult
from app.checks.domain.findings import Severity, Verdict
from app.checks.services.checks import official_checks, store_results
from app.checks.services.findings import record_findings
from app.core.lifecycle import (
    UNDECIDED_CORRECTIONS,
    CorrectionState,
    JobState,
    PointState,
)
from app.core.refusals import Kind, Refused
from app.core.times import Clock
from app.db.models import Correction, Job, Submission, utcnow
from app.jobs.queue import JobQueue, claim_job, enqueue_after_commit, mark_succeeded
from app.review.domain.corrections import (
    CORRECTABLE,
    after_finalization,
    changed_files,
    classification_changes,
    may_correct,
    result_changes,
)
from app.review.services.policy import facts_of
from app.review.services.review import keep_record
from app.settings import Settings
from app.storage import StorageError
from app.submissions.domain.archive import ArchiveRejected
from app.submissions.domain.bundle import manifest
from app.submissions.services.extracted import archive_folder, bundle_folder, keep_extraction
from app.submissions.services.intake import same_organisation, store_archive
from app.submissions.services.points import labelled_points
from app.submissions.services.reading import ArchiveReading, read_archive
from app.submissions.services.storage import ReceivedFile

log = logging.getLogger(__name__)

CHECK_CORRECTION = "check_correction"
_SHOWN_PROBLEMS = 5


class CorrectionRefused(Refused):
    pass


class CorrectionView(BaseModel):
    id: str
    submission: str
    state: CorrectionState
    reason: str = Field(description="what the correction corrects, in the submitter's words")
    changed_files: list[str] = Field(
        description="the files it adds, changes or removes, by their path in the bundle"
    )
    after_finalization: bool = Field(description="a request the chair approves (rules §11.7)")
    filed_by: str
    filed_at: dt.datetime
    outcome: str | None = Field(description="why it was refused or declined; the chair's word")
    decided_by: str | None
    decided_at: dt.datetime | None
    applied_at: dt.datetime | None


def correction_view(correction: Correction) -> CorrectionView:
    return CorrectionView(
        id=correction.public_id,
        submission=correction.submission.public_id,
        state=correction.state,
        reason=correction.reason,
        changed_files=list(correction.changed_files),
        after_finalization=correction.after_finalization,
        filed_by=correction.filed_by,
        filed_at=correction.filed_at,
        outcome=correction.outcome,
        decided_by=correction.decided_by,
        decided_at=correction.decided_at,
        applied_at=correction.applied_at,
    )


def corrections_of(session: Session, submission: Submission) -> list[Correction]:
    return list(
        session.scalars(
            select(Correction)
            .where(Correction.submission_id == submission.id)
            .order_by(Correction.id)
        )
    )


def correction_of(session: Session, submission: Submission, public_id: str) -> Correction:
    found = session.scalar(
        select(Correction).where(
            Correction.public_id == public_id, Correction.submission_id == submission.id
        )
    )
    if found is None:
        raise CorrectionRefused(
            "unknown-correction", f"no correction {public_id!r} of this submission",
            Kind.NOT_FOUND,
        )  # fmt: skip
    return found


def undecided(session: Session, submission: Submission) -> Correction | None:
    return session.scalar(
        select(Correction).where(
            Correction.submission_id == submission.id, Correction.state.in_(UNDECIDED_CORRECTIONS)
        )
    )


def correction_refusal(
    session: Session, submission: Submission, who: Principal | None
) -> Refused | None:
    """Why *who* may not file a correction now (None: they may), as the page shows it."""
    pending = undecided(session, submission)
    refusal = may_correct(
        actor_of(who, submission), facts_of(session, submission),
        pending.public_id if pending is not None else None,
    )  # fmt: skip
    return refusal.refused() if refusal is not None else None


def _withdrawn(submission: Submission) -> frozenset[str]:
    return frozenset(
        label for label, p in labelled_points(submission) if p.state == PointState.WITHDRAWN
    )


def _listed(problems: list[str]) -> str:
    shown = "; ".join(problems[:_SHOWN_PROBLEMS])
    more = len(problems) - _SHOWN_PROBLEMS
    return shown + (f"; and {more} more" if more > 0 else "")


def _compared(settings: Settings, submission: Submission, reading: ArchiveReading) -> list[str]:
    """The files the corrected bundle changes; refused when its results are not the
    submitted ones or it is another organisation's."""
    if reading.declared_organisation:
        same_organisation(submission.organization, reading.declared_organisation)
    submitted = manifest(bundle_folder(settings, submission))
    corrected = manifest(reading.folder)
    if problems := result_changes(submitted, corrected, _withdrawn(submission)):
        raise CorrectionRefused(
            "results-changed",
            f"results may not change (rules §11.7): {_listed(problems)}",
            Kind.CONFLICT,
        )
    if not (changed := changed_files(submitted, corrected)):
        raise CorrectionRefused(
            "nothing-corrected", "the bundle holds the submission's own files: nothing changes",
            Kind.CONFLICT,
        )  # fmt: skip
    return changed


def file_correction(
    *,
    session: Session,
    settings: Settings,
    queue: JobQueue,
    submission: Submission,
    who: Principal,
    received: ReceivedFile,
    reason: str,
    at: dt.datetime,
) -> Correction:
    """Take *received* as a correction of *submission* and queue its checks; refused
    (nothing kept, the submission as it was) when it may not be or its results differ."""
    try:
        if not reason.strip():
            raise CorrectionRefused("reason-required", "say what the correction corrects")
        if (refusal := correction_refusal(session, submission, who)) is not None:
            raise refusal
        reading = read_archive(settings, received.path, keep_events=False)
    except ArchiveRejected as exc:
        received.path.unlink(missing_ok=True)
        raise CorrectionRefused(exc.code, exc.message, exc.kind, member=exc.member) from exc
    except BaseException:
        received.path.unlink(missing_ok=True)
        raise
    try:
        changed = _compared(settings, submission, reading)
        correction = Correction(
            submission=submission, archive=store_archive(session, settings, received),
            archive_format=reading.format, bundle_root=reading.root,
            bundle_submission_id=reading.submission_dir_name,
            content_digest=reading.content_digest, disclosed=reading.disclosed,
            changed_files=changed, reason=reason.strip(), filed_by=who.email, filed_at=at,
            after_finalization=after_finalization(submission.state),
        )  # fmt: skip
        add_correction(session, correction)
        keep_extraction(settings, reading.tree, received.sha256)
    finally:
        received.path.unlink(missing_ok=True)
        reading.discard()
    said = f"{correction.public_id[:8]}: {len(changed)} file(s); {correction.reason}"
    record(session, submission, action="correction filed", actor=who.email, at=at, reason=said)
    _queue_checks(session, queue, correction)
    return correction


def add_correction(session: Session, correction: Correction) -> None:
    """Store *correction*; one filed at the same instant as another is refused (the
    database's index, where the check above cannot see the other)."""
    try:
        with session.begin_nested():
            session.add(correction)
            session.flush()
    except IntegrityError as exc:
        raise CorrectionRefused(
            "correction-pending",
            "another correction of this submission was filed at the same moment: one at a time",
            Kind.CONFLICT,
        ) from exc


def _queue_checks(session: Session, queue: JobQueue, correction: Correction) -> None:
    job = Job(kind=CHECK_CORRECTION, submission=correction.submission)
    session.add(job)
    correction.job = job
    session.flush()
    enqueue_after_commit(session, queue, job)


def decide_correction(
    *,
    session: Session,
    queue: JobQueue,
    submission: Submission,
    correction_id: str,
    approve: bool,
    actor: str,
    reason: str,
    at: dt.datetime,
) -> Correction:
    """The chair approves (its checks run again, then it is applied) or declines a
    correction requested after finalization (rules §11.7)."""
    correction = correction_of(session, submission, correction_id)
    if correction.state != CorrectionState.REQUESTED:
        raise CorrectionRefused(
            "not-requested",
            f"correction {correction.public_id} is {correction.state}: only a requested one "
            "is approved or declined",
            Kind.CONFLICT,
        )
    if not approve and not reason.strip():
        raise CorrectionRefused("reason-required", "say why the correction is declined")
    correction.decided_by, correction.decided_at = actor, at
    correction.outcome = reason.strip() or None
    if approve:
        correction.state = CorrectionState.APPROVED
        _queue_checks(session, queue, correction)
    else:
        correction.state = CorrectionState.DECLINED
        _tell_submitter(session, correction, f"declined by {actor}: {reason.strip()}")
    record(session, submission, action=f"correction {correction.state}", actor=actor, at=at,
           reason=f"{correction.public_id[:8]}: {reason.strip() or correction.reason}")  # fmt: skip
    return correction


# --- the worker's part -------------------------------------------------------------------


def correction_of_job(session: Session, job_id: int) -> Correction | None:
    return session.scalar(select(Correction).where(Correction.job_id == job_id))


def run_correction_check(
    *,
    session: Session,
    settings: Settings,
    job_id: int,
    queue: JobQueue | None = None,
    clock: Clock = utcnow,
) -> None:
    """The official checks of a correction's bundle (a worker job), and what follows: in
    review it is applied; after finalization it waits for the chair, or, approved, it is
    applied."""
    job = session.get(Job, job_id)
    correction = correction_of_job(session, job_id)
    if job is None or correction is None or job.state in (JobState.SUCCEEDED, JobState.FAILED):
        return
    if not claim_job(session, job, stale_after_s=settings.job_stale_after_s, now=clock()):
        return
    if correction.state in (CorrectionState.CHECKING, CorrectionState.APPROVED):
        _check_and_follow(session, settings, correction, clock)
    mark_succeeded(job, clock())
    session.commit()


def _check_and_follow(
    session: Session, settings: Settings, correction: Correction, clock: Clock
) -> None:
    submission = correction.submission
    if submission.state not in CORRECTABLE:
        _refuse(session, correction, f"the submission is {submission.state}", clock())
        return
    try:
        root = archive_folder(settings, correction.archive.sha256, correction.bundle_root)
    except StorageError as exc:
        log.error("correction %s: its archive cannot be read: %s", correction.public_id, exc)
        _refuse(session, correction, "its stored archive cannot be read", clock())
        return
    result = official_checks(settings, root, clock())
    if (problem := _failed(submission, result)) is not None:
        _refuse(session, correction, problem, clock())
    elif correction.state == CorrectionState.CHECKING and after_finalization(submission.state):
        # Filed in review and finalized since, it is the chair's to approve all the same.
        correction.after_finalization = True
        correction.state = CorrectionState.REQUESTED
        notify(
            session, chairs(session),
            f"Correction requested: {submission.organization.name} submission "
            f"{submission.public_id[:8]}",
            f"{correction.filed_by}: {correction.reason} ({len(correction.changed_files)} "
            "file(s)); it waits for your approval (rules §11.7).",
            f"/submissions/{submission.public_id}#corrections",
        )  # fmt: skip
    else:
        apply_correction(session, settings, correction, result, clock())


def _failed(submission: Submission, result: ComplianceResult) -> str | None:
    """Why the corrected bundle may not replace the submission's: its checks, or a
    system's division or availability declared otherwise."""
    if result.verdict != Verdict.PASSED:
        errors = [f.message for f in result.findings if f.severity == Severity.ERROR]
        return f"its official checks failed: {_listed(errors) or result.verdict}"
    problems = classification_changes(
        {s.dir_name: (s.division, s.availability) for s in submission.systems},
        {s.dir_name: (s.division, s.availability) for s in result.official.systems},
    )
    return _listed(problems) if problems else None


def _refuse(session: Session, correction: Correction, why: str, at: dt.datetime) -> None:
    correction.state = CorrectionState.REFUSED
    correction.outcome = f"refused: {why}"
    correction.decided_at = at
    record(session, correction.submission, action="correction refused", at=at,
           reason=f"{correction.public_id[:8]}: {why}")  # fmt: skip
    _tell_submitter(session, correction, correction.outcome)


def _tell_submitter(session: Session, correction: Correction, what: str) -> None:
    submission = correction.submission
    notify(
        session, members_of(session, submission.organization_id),
        f"Correction {correction.public_id[:8]} of submission {submission.public_id[:8]}",
        what, f"/submissions/{submission.public_id}#corrections",
    )  # fmt: skip


def apply_correction(
    session: Session,
    settings: Settings,
    correction: Correction,
    result: ComplianceResult,
    at: dt.datetime,
) -> None:
    """The corrected bundle becomes the submission's: its archive, disclosures, findings
    and systems (the points keep their states; the review goes on); after finalization
    a new version of the public record carries it."""
    submission = correction.submission
    submission.archive = correction.archive
    submission.archive_format = correction.archive_format
    submission.bundle_root = correction.bundle_root
    submission.bundle_submission_id = correction.bundle_submission_id
    submission.content_digest = correction.content_digest
    submission.disclosed = correction.disclosed
    record_findings(
        session, submission_id=submission.id, job_id=correction.job_id, kind="compliance",
        version=result.checker_version, findings=result.findings, at=at,
    )  # fmt: skip
    store_results(session, submission, result)
    submission.checker_version = result.checker_version
    correction.state = CorrectionState.APPLIED
    correction.applied_at = at
    said = f"{correction.public_id[:8]}: {correction.reason}"
    record(session, submission, action="corrected", actor=correction.filed_by, at=at,
           reason=said, policy=policy_in_force(session, settings))  # fmt: skip
    session.flush()
    keep_record(session, settings, submission, at, why=f"corrected: {correction.reason}",
                noted=correction.after_finalization)  # fmt: skip
    _tell_submitter(session, correction, f"applied: {correction.reason}")


def fail_correction_check(
    *, session: Session, job: Job, reason: str, clock: Clock = utcnow
) -> None:
    """The checks could not run at all: the correction is refused with the reason (the
    submission keeps its bundle); the submitter may file it again."""
    job.state = JobState.FAILED
    job.error = reason
    job.finished_at = clock()
    correction = correction_of_job(session, job.id)
    if correction is not None and correction.state in UNDECIDED_CORRECTIONS:
        _refuse(session, correction, f"its checks could not run: {reason}", clock())
    session.commit()
