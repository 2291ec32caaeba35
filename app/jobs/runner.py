"""Running one background job: its kind's work, a wait when the artifact store is out of
reach, and a failure that says why when anything else goes wrong."""

from __future__ import annotations

import datetime as dt
import logging

from sqlalchemy.orm import Session

from app.core.lifecycle import JobState
from app.core.times import Clock
from app.db.models import Job, utcnow
from app.jobs.kinds import JobKind
from app.jobs.queue import JobQueue
from app.settings import Settings
from app.storage import StoreUnavailable

log = logging.getLogger(__name__)


def run_job(
    kind: JobKind,
    *,
    session: Session,
    settings: Settings,
    job_id: int,
    queue: JobQueue,
    clock: Clock = utcnow,
) -> None:
    """Run job *job_id* of *kind*; whatever happens, the job does not stay "running"."""
    try:
        kind.run(session=session, settings=settings, job_id=job_id, queue=queue)
    except StoreUnavailable as exc:
        log.warning("job %s waits for the artifact store: %s", job_id, exc)
        session.rollback()
        job = session.get(Job, job_id)
        if job is not None:
            wait_for_store(kind, session=session, settings=settings, job=job, queue=queue,
                           now=clock())  # fmt: skip
    except Exception as exc:
        log.exception("job %s failed while %s", job_id, kind.doing)
        session.rollback()
        job = session.get(Job, job_id)
        if job is not None:
            kind.fail(
                session=session,
                job=job,
                reason=f"internal error while {kind.doing}: {type(exc).__name__}: {exc}",
                clock=clock,
            )


def store_wait_s(settings: Settings, waits: int) -> float:
    """How long a job waits before its next try after *waits* waits: doubling from the
    first wait, up to the longest."""
    return float(min(settings.storage_wait_first_s * 2**waits, settings.storage_wait_longest_s))


def wait_for_store(
    kind: JobKind,
    *,
    session: Session,
    settings: Settings,
    job: Job,
    queue: JobQueue,
    now: dt.datetime,
) -> None:
    """Put *job* back in the queue to run again once the store may be back, saying so on
    the job; after the last try, fail it (and its work) with the reason. The store's own
    words (its address, its bucket) stay in the operator's log."""
    if job.store_waits >= settings.storage_wait_tries:
        since = job.started_at or now
        minutes = max(round((now - since).total_seconds() / 60), 1)
        kind.fail(
            session=session,
            job=job,
            reason=f"the artifact store could not be reached in {job.store_waits + 1} tries "
            f"over {minutes} min; run it again once the store is back",
            clock=lambda: now,
        )
        return
    delay = store_wait_s(settings, job.store_waits)
    job.store_waits += 1
    job.attempts = max(job.attempts - 1, 0)  # a wait for the store is no lost worker
    job.state = JobState.QUEUED
    job.stage = f"waiting for the artifact store (try {job.store_waits + 1} in {delay:.0f} s)"
    job.error = "the artifact store cannot be reached now"
    # The recovery sweep resends a queued job only well after this: never before its time.
    job.enqueued_at = now + dt.timedelta(seconds=delay)
    job.heartbeat_at = now
    session.commit()
    queue.send(job.id, job.kind, delay_s=delay)
