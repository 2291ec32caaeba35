"""Running one job: a wait with a doubling delay while the artifact store is out of
reach, a failure with the reason after the last try, and any other error failing the job
with what went wrong. (The whole path, a check on a worker host against a partitioned
S3 store: tests/app/submissions/web/test_archives.py.)"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.orm import Session

from app.core.lifecycle import JobState
from app.db.models import Job
from app.db.session import Database
from app.jobs.kinds import JobKind
from app.jobs.runner import run_job, store_wait_s
from app.settings import Settings
from app.storage import StoreUnavailable
from tests.support.fakes import RecordingQueue

NOW = dt.datetime(2026, 12, 4, 9, 0, tzinfo=dt.UTC)


def test_the_wait_doubles_up_to_the_longest(settings: Settings) -> None:
    waits = [store_wait_s(settings, n) for n in range(9)]
    assert waits == [5, 10, 20, 40, 80, 160, 300, 300, 300]


def _kind(error: Exception, failed: list[str]) -> JobKind:
    """A kind whose work raises *error* (the runner is what is tested, not a service)."""

    def run(*, session: Session, job_id: int, **_: Any) -> None:
        job = session.get(Job, job_id)
        assert job is not None
        job.state, job.attempts = JobState.RUNNING, job.attempts + 1
        session.commit()
        raise error

    def fail(*, session: Session, job: Job, reason: str, **_: Any) -> None:
        job.state, job.error = JobState.FAILED, reason
        failed.append(reason)
        session.commit()

    return JobKind("probe", "probing", run, fail)


def test_a_job_waits_for_the_store_then_fails_saying_why(
    database: Database, settings: Settings
) -> None:
    settings = settings.model_copy(update={"storage_wait_tries": 2})
    queue, failed = RecordingQueue(), list[str]()
    kind = _kind(StoreUnavailable("s3://secret-bucket/ cannot be reached"), failed)
    with database.session() as session:
        job = Job(kind="probe")
        session.add(job)
        session.commit()
        for tries, delay in ((1, 5), (2, 10)):
            run_job(kind, session=session, settings=settings, job_id=job.id, queue=queue,
                    clock=lambda: NOW)  # fmt: skip
            session.refresh(job)
            assert (job.state, job.store_waits, queue.delays[job.id]) == ("queued", tries, delay)
            assert job.attempts == 0  # a wait is not a lost worker's attempt
            assert job.enqueued_at == NOW + dt.timedelta(seconds=delay)
            assert "secret-bucket" not in (job.error or "") + (job.stage or "")
        run_job(kind, session=session, settings=settings, job_id=job.id, queue=queue,
                clock=lambda: NOW)  # fmt: skip
        session.refresh(job)
        assert job.state == "failed" and len(queue.sent) == 2
        assert failed == ["the artifact store could not be reached in 3 tries over 1 min; "
                          "run it again once the store is back"]  # fmt: skip


def test_any_other_error_fails_the_job_with_what_went_wrong(
    database: Database, settings: Settings
) -> None:
    queue, failed = RecordingQueue(), list[str]()
    with database.session() as session:
        job = Job(kind="probe")
        session.add(job)
        session.commit()
        run_job(_kind(KeyError("points"), failed), session=session, settings=settings,
                job_id=job.id, queue=queue)  # fmt: skip
        session.refresh(job)
        assert job.state == "failed" and queue.sent == []
        assert failed == ["internal error while probing: KeyError: 'points'"]
