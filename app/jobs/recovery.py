"""Finding lost background jobs and sending them again, whatever their kind."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.orm import Session

from app.core.times import Clock
from app.db.models import utcnow
from app.jobs.kinds import JobKind
from app.jobs.queue import JobQueue, enqueue_after_commit, recover_lost_jobs, settle_waiting
from app.settings import Settings


def recover_jobs(
    *,
    session: Session,
    settings: Settings,
    queue: JobQueue,
    kinds: Mapping[str, JobKind],
    clock: Clock = utcnow,
) -> list[int]:
    """Send lost jobs again; give up on those out of attempts, saying why, through their
    kind (*kinds*: the registry, app.pipeline.JOB_KINDS); move on the jobs waiting for
    children that have all ended. Returns the ids sent."""
    resend, given_up = recover_lost_jobs(
        session,
        stale_after_s=settings.job_stale_after_s,
        max_attempts=settings.job_max_attempts,
        now=clock(),
    )
    for job in given_up:
        reason = job.error or "the worker running it was lost"
        kinds[job.kind].fail(session=session, job=job, reason=reason, clock=clock)
    released, failed = settle_waiting(session)
    for job, reason in failed:
        kinds[job.kind].fail(session=session, job=job, reason=reason, clock=clock)
    for job in [*resend, *released]:
        enqueue_after_commit(session, queue, job)
    session.commit()
    for kind in kinds.values():
        if kind.tidy is not None:
            kind.tidy(session=session, settings=settings)
    return [job.id for job in [*resend, *released]]
