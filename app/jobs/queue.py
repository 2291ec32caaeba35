"""Background jobs: rows in the database, sent to the queue only after commit.

The queue is a small interface so services never import Celery; the worker package
provides the Celery implementation. A job's row is the truth: state, stage, progress,
attempts and timestamps. A job lost with its worker is found by its stale heartbeat
and sent again, up to a limit, then marked failed with the reason.

A job may start other jobs (its children, ``Job.parent_id``) and wait for them: it is
then held by no worker (``waiting``), and is queued again when the last child succeeds,
or fails when one of them fails.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Protocol

from sqlalchemy import event, func, or_, select, update
from sqlalchemy.orm import Session, aliased

from app.core.lifecycle import JobState
from app.db.models import Job, utcnow


class JobQueue(Protocol):
    def send(self, job_id: int, kind: str, delay_s: float = 0.0) -> None:
        """Send job *job_id* to its kind's task, to start no sooner than *delay_s* from now."""
        ...


CHECK_SUBMISSION = "check_submission"

# Two queues: the jobs a person waits on for a verdict (an upload taken, checked) and
# the rest (re-counts, reproductions: seconds to minutes each). A worker may take both or
# only the first, so a verdict never waits behind a long job there
# (`endpoints-portal worker --verdicts-only`).
VERDICT_QUEUE = "portal.verdicts"
WORK_QUEUE = "portal"


def task_name(kind: str) -> str:
    """The worker task that carries jobs of *kind* (the registry: app.pipeline.JOB_KINDS)."""
    return f"portal.{kind}"


log = logging.getLogger(__name__)

_PENDING_KEY = "endpoints_portal_pending_jobs"


def enqueue_after_commit(session: Session, queue: JobQueue, job: Job) -> None:
    """Send *job* once the session's transaction commits (never before, never on rollback)."""
    pending: list[tuple[JobQueue, Job]] | None = session.info.get(_PENDING_KEY)
    if pending is None:
        pending = []
        session.info[_PENDING_KEY] = pending

        @event.listens_for(session, "after_commit")
        def _send(sess: Session) -> None:
            items = list(sess.info.get(_PENDING_KEY, []))
            sess.info[_PENDING_KEY] = []
            for q, j in items:
                try:
                    q.send(j.id, j.kind)
                except Exception:
                    # The job row is committed and stays queued: the recovery sweep
                    # sends it again once the broker is back.
                    log.warning(
                        "could not send job %s to the queue; it stays queued", j.id, exc_info=True
                    )

        @event.listens_for(session, "after_rollback")
        def _drop(sess: Session) -> None:
            sess.info[_PENDING_KEY] = []

    job.enqueued_at = utcnow()
    pending.append((queue, job))


def claim_job(
    session: Session, job: Job, *, stale_after_s: float, now: dt.datetime | None = None
) -> bool:
    """Take *job* for this worker, atomically: it must be queued, or running with a
    worker gone silent. False when another worker has it (a redelivered or re-sent
    message): the caller leaves it alone, so a job never runs twice at once."""
    now = now or utcnow()
    cutoff = now - dt.timedelta(seconds=stale_after_s)
    taken = session.execute(
        update(Job)
        .where(
            Job.id == job.id,
            or_(
                Job.state == JobState.QUEUED,
                (Job.state == JobState.RUNNING)
                & or_(Job.heartbeat_at.is_(None), Job.heartbeat_at < cutoff),
            ),
        )
        .values(
            state=JobState.RUNNING,
            attempts=Job.attempts + 1,
            heartbeat_at=now,
            started_at=func.coalesce(Job.started_at, now),
            error=None,
        )
        .execution_options(synchronize_session=False)
    )
    session.commit()
    session.refresh(job)
    return bool(taken.rowcount == 1)  # type: ignore[attr-defined]


def set_progress(session: Session, job: Job, stage: str, progress: float) -> None:
    job.stage = stage
    job.progress = progress
    job.heartbeat_at = utcnow()
    session.commit()


def mark_succeeded(job: Job, at: dt.datetime) -> None:
    job.state = JobState.SUCCEEDED
    job.stage = "done"
    job.progress = 1.0
    job.finished_at = at
    job.heartbeat_at = at


def requeue_later(
    session: Session,
    queue: JobQueue,
    job: Job,
    *,
    now: dt.datetime,
    delay_s: float,
    stage: str,
    error: str | None = None,
) -> None:
    """Put a claimed *job* back in the queue to start again in *delay_s*, saying why on
    the job: a wait, not a lost worker (its attempt is not counted), and the recovery
    sweep does not send it again before its time. Commits."""
    job.attempts = max(job.attempts - 1, 0)
    job.state = JobState.QUEUED
    job.stage = stage
    job.error = error
    job.enqueued_at = now + dt.timedelta(seconds=delay_s)
    job.heartbeat_at = now
    session.commit()
    queue.send(job.id, job.kind, delay_s=delay_s)


def recover_lost_jobs(
    session: Session, *, stale_after_s: float, max_attempts: int, now: dt.datetime | None = None
) -> tuple[list[Job], list[Job]]:
    """Jobs to send again: running ones whose worker went silent, queued ones that were
    never picked up (the broker lost them, or was down when they were sent), and ones
    asked to stop whose worker went silent before it could.

    A lost job that has used its attempts is marked failed with the reason instead.
    Returns ``(to_send, given_up)``.
    """
    now = now or utcnow()
    cutoff = now - dt.timedelta(seconds=stale_after_s)
    candidates = session.scalars(
        select(Job).where(
            or_(
                (Job.state.in_([JobState.RUNNING, JobState.CANCELLING]))
                & (Job.heartbeat_at < cutoff),
                (Job.state == JobState.QUEUED) & (Job.enqueued_at < cutoff),
            )
        )
    ).all()
    resend: list[Job] = []
    given_up: list[Job] = []
    for job in candidates:
        if job.state == JobState.CANCELLING:
            # Asked to stop, and its worker is gone: sent again, its kind ends it as
            # cancelled at once (nothing is re-run).
            job.enqueued_at = now
            job.heartbeat_at = now
            resend.append(job)
        elif job.attempts >= max_attempts:
            job.state = JobState.FAILED
            job.finished_at = now
            job.error = (
                f"gave up after {job.attempts} attempts: the worker running it stopped "
                "answering each time"
            )
            given_up.append(job)
        else:
            job.state = JobState.QUEUED
            job.enqueued_at = now
            resend.append(job)
    return resend, given_up


def wait_for_children(
    session: Session, queue: JobQueue, parent: Job, children: list[Job], stage: str
) -> None:
    """Park *parent* until *children* (new jobs, not yet added) have run; each is sent
    once the session commits. The parent's next run is a new phase: its attempts start
    again from zero."""
    parent.state = JobState.WAITING
    parent.stage = stage
    parent.attempts = 0
    for child in children:
        child.parent_id = parent.id
        session.add(child)
    session.flush()
    for child in children:
        enqueue_after_commit(session, queue, child)


def release_parent(session: Session, queue: JobQueue, child: Job, stage: str) -> bool:
    """Queue *child*'s waiting parent again if every one of its children has succeeded.

    Call it after the child's success is committed. One conditional UPDATE: of two
    children finishing at once, the later statement sees both successes, and only one
    of them moves the parent (the other finds it no longer waiting)."""
    if child.parent_id is None:
        return False
    sibling = aliased(Job)
    unfinished = (
        select(sibling.id)
        .where(sibling.parent_id == Job.id, sibling.state != JobState.SUCCEEDED)
        .exists()
    )
    moved = session.execute(
        update(Job)
        .where(Job.id == child.parent_id, Job.state == JobState.WAITING, ~unfinished)
        .values(state=JobState.QUEUED, stage=stage)
        .execution_options(synchronize_session=False)
    )
    if moved.rowcount != 1:  # type: ignore[attr-defined]
        session.commit()
        return False
    parent = session.get(Job, child.parent_id)
    assert parent is not None
    session.refresh(parent)
    enqueue_after_commit(session, queue, parent)
    session.commit()
    return True


def cancel_children(session: Session, parent: Job, at: dt.datetime) -> None:
    """Stop *parent*'s unfinished children: a queued one at once, a running one at its
    next progress report."""
    for child in session.scalars(select(Job).where(Job.parent_id == parent.id)):
        if child.state == JobState.QUEUED:
            child.state = JobState.CANCELLED
            child.finished_at = at
        elif child.state == JobState.RUNNING:
            child.state = JobState.CANCELLING


def settle_waiting(session: Session) -> tuple[list[Job], list[tuple[Job, str]]]:
    """Waiting parents the recovery sweep moves on: those whose children all succeeded
    (a release lost with its worker) and those with a child that failed or was
    cancelled, with the reason. Returns ``(to_send, to_fail)``."""
    to_send: list[Job] = []
    to_fail: list[tuple[Job, str]] = []
    for parent in session.scalars(select(Job).where(Job.state == JobState.WAITING)):
        children = session.scalars(
            select(Job).where(Job.parent_id == parent.id).order_by(Job.id)
        ).all()
        ended = [c for c in children if c.state in (JobState.FAILED, JobState.CANCELLED)]
        if ended:
            child = ended[0]
            to_fail.append((parent, f"a job it waited for {child.state.value}: {child.error}"))
        elif all(c.state == JobState.SUCCEEDED for c in children):
            parent.state = JobState.QUEUED
            to_send.append(parent)
    return to_send, to_fail
