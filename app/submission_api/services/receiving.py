"""What an upload through a signed URL becomes: a run's archive or a submission's bundle,
taken the same way whether the portal received the bytes itself (the local store) or a
worker found them staged in the object store (S3).

For a staged upload a worker job watches the grant's staging object: it looks again
soon while the grant is young (a client uploads as soon as it has the URL), then every
``ENDPOINTS_PORTAL_STAGED_UPLOAD_POLL_S`` until the grant expires, then takes what
is there (size first, then content, in the reading child) to its content address and
removes the staging object, so a second PUT to the same URL changes nothing taken.
"""

from __future__ import annotations

import datetime as dt
import logging
import tempfile
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.lifecycle import JobState
from app.core.refusals import Kind, Refused
from app.core.times import Clock
from app.db.models import ApiSubmission, Job, MeasuredRun, TransferGrant, utcnow
from app.jobs.kinds import JobKind
from app.jobs.queue import JobQueue, claim_job, mark_succeeded, requeue_later
from app.measurements.services.registry import take_run_archive
from app.settings import Settings
from app.storage import StorageError, artifact_store, staging
from app.submission_api.services.bundles import take_bundle
from app.submission_api.services.transfers import RECEIVE_STAGED, grant_of_job
from app.submissions.services.storage import ReceivedFile, receive_local

log = logging.getLogger(__name__)


def receive(
    *, session: Session, settings: Settings, queue: JobQueue, grant: TransferGrant,
    received: ReceivedFile, now: dt.datetime,
) -> None:  # fmt: skip
    """Take *received* for what *grant* names; raises the refusal, nothing kept."""
    if grant.subject == "run":
        run = session.scalar(select(MeasuredRun).where(MeasuredRun.public_id == grant.subject_id))
        if run is None:
            received.path.unlink(missing_ok=True)
            raise Refused("no-such-run", "the run was deleted", Kind.NOT_FOUND)
        take_run_archive(session=session, settings=settings, run=run, received=received)
        return
    record = session.scalar(
        select(ApiSubmission).where(ApiSubmission.public_id == grant.subject_id)
    )
    if record is None:
        received.path.unlink(missing_ok=True)
        raise Refused("no-such-submission", "the submission was deleted", Kind.NOT_FOUND)
    take_bundle(session=session, settings=settings, queue=queue, record=record,
                received=received, now=now)  # fmt: skip


def _finish(
    session: Session, job: Job, grant: TransferGrant, outcome: str, at: dt.datetime
) -> None:
    grant.outcome = outcome[:500]
    grant.used_at = grant.used_at or at
    mark_succeeded(job, at)
    session.commit()


FIRST_LOOK_S = 0.2


def next_look_s(settings: Settings, grant: TransferGrant, now: dt.datetime) -> float:
    """When to look again: half the grant's age, from a fifth of a second up to the
    configured interval, so an upload made at once is taken at once and a late one costs
    a look every interval."""
    age = (now - grant.created_at).total_seconds()
    return min(settings.staged_upload_poll_s, max(FIRST_LOOK_S, age / 2))


def run_receive_staged(
    *, session: Session, settings: Settings, job_id: int, queue: JobQueue, clock: Clock = utcnow
) -> None:
    """One look at a grant's staging object (a worker job)."""
    job = session.get(Job, job_id)
    grant = grant_of_job(session, job_id)
    if job is None or grant is None or job.state in (JobState.SUCCEEDED, JobState.FAILED):
        return
    if not claim_job(session, job, stale_after_s=settings.job_stale_after_s, now=clock()):
        return
    store = staging(artifact_store(settings))
    now = clock()
    if store is None or grant.staging_key is None:
        _finish(session, job, grant, "no staging store", now)
        return
    size = store.staged_size(grant.staging_key)
    if size is None:
        if now >= grant.expires_at:
            _finish(session, job, grant, "expired, nothing arrived", now)
        else:
            requeue_later(session, queue, job, now=now, delay_s=next_look_s(settings, grant, now),
                          stage="waiting for the upload")  # fmt: skip
        return
    grant.used_at = now
    session.commit()
    _finish(session, job, grant, _take_staged(session, settings, queue, grant, size), clock())


def _take_staged(
    session: Session, settings: Settings, queue: JobQueue, grant: TransferGrant, size: int
) -> str:
    """Fetch, read and take the staged object; what became of it. The staging object
    goes either way."""
    store = staging(artifact_store(settings))
    assert store is not None and grant.staging_key is not None
    try:
        if size > settings.max_upload_bytes:
            return f"refused: {size} bytes, over the {settings.max_upload_bytes}-byte limit"
        settings.tmp_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=settings.tmp_dir) as tmp:
            fetched = Path(tmp) / "staged"
            store.fetch_staged(grant.staging_key, fetched, settings.max_upload_bytes)
            received = receive_local(fetched, settings.tmp_dir, settings.max_upload_bytes)
            try:
                receive(session=session, settings=settings, queue=queue, grant=grant,
                        received=received, now=utcnow())  # fmt: skip
            except Refused as exc:
                session.rollback()
                keep_refusal(session, grant, exc)
                return f"refused: {exc.code}: {exc.message}"
            session.commit()
            return "taken"
    finally:
        try:
            store.delete_staged(grant.staging_key)
        except StorageError:  # a stray the next look or the operator removes
            log.warning("the staging object %s could not be removed", grant.staging_key)


def keep_refusal(session: Session, grant: TransferGrant, exc: Refused) -> None:
    """A submission's refused first bundle is kept on its record (it says REJECTED)."""
    if grant.subject != "submission":
        return
    record = session.scalar(
        select(ApiSubmission).where(ApiSubmission.public_id == grant.subject_id)
    )
    if record is not None and record.submission is None:
        record.refused_code, record.refused_message = exc.code, exc.message
        session.commit()


def fail_receive_staged(*, session: Session, job: Job, reason: str, clock: Clock = utcnow) -> None:
    job.state = JobState.FAILED
    job.error = reason
    job.finished_at = clock()
    session.commit()


SUBMISSION_API_JOB_KINDS = (
    JobKind(
        RECEIVE_STAGED,
        "taking a staged upload",
        run_receive_staged,
        fail_receive_staged,
        verdict=True,  # the official CLI waits on it, then on the check it starts
    ),
)
