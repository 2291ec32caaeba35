"""Running one background job: its kind's work, a wait when the artifact store is out of
reach, and a failure that says why when anything else goes wrong."""

from __future__ import annotations

import datetime as dt
import logging

from sqlalchemy.orm import Session

from app.core.times import Clock
from app.db.models import Job, utcnow
from app.jobs.kinds import JobKind
from app.jobs.queue import JobQueue, requeue_later
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
    requeue_later(
        session, queue, job, now=now, delay_s=delay,
        stage=f"waiting for the artifact store (try {job.store_waits + 1} in {delay:.0f} s)",
        error="the artifact store cannot be reached now",
    )  # fmt: skip
