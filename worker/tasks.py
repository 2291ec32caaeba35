"""Thin tasks. Each opens a session, calls one service and commits."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

from celery.signals import worker_process_init, worker_ready, worker_shutdown

from app.db.models import Job
from app.db.session import Database
from app.services.checks import fail_check, run_checks
from app.services.recovery import recover_jobs
from app.services.reproductions import fail_reproduction, run_reproduction
from app.services.retokenization import fail_retokenization, run_retokenization
from app.services.review import advance_clocks
from app.settings import get_settings

from .celery_app import CLOCK_TASK, CeleryJobQueue, celery_app

log = logging.getLogger(__name__)
RunService = Callable[..., Any]
FailService = Callable[..., None]
_stop = threading.Event()


@lru_cache(maxsize=1)
def database() -> Database:
    return Database(get_settings().effective_database_url)


def _run_job(job_id: int, run: RunService, fail: FailService, doing: str) -> None:
    """Open a session, run one service; if it raises, the job row says why."""
    settings = get_settings()
    with database().session() as session:
        try:
            run(session=session, settings=settings, job_id=job_id)
        except Exception as exc:  # whatever went wrong, the job must not stay "running"
            log.exception("job %s failed while %s", job_id, doing)
            session.rollback()
            job = session.get(Job, job_id)
            if job is not None:
                fail(
                    session=session,
                    job=job,
                    reason=f"internal error while {doing}: {type(exc).__name__}: {exc}",
                )


@celery_app.task(name="portal.check_submission")
def check_submission(job_id: int) -> None:
    # Passing submissions with run events get their re-counts queued next.
    _run_job(job_id, partial(run_checks, queue=CeleryJobQueue()), fail_check, "checking")


@celery_app.task(name="portal.retokenize_point")
def retokenize_point(job_id: int) -> None:
    _run_job(job_id, run_retokenization, fail_retokenization, "re-counting tokens")


@celery_app.task(name="portal.reproduce_point")
def reproduce_point(job_id: int) -> None:
    _run_job(job_id, run_reproduction, fail_reproduction, "reproducing")


@celery_app.task(name=CLOCK_TASK, ignore_result=True)
def run_clocks(now: str | None = None) -> list[str]:
    """What the review clocks do by *now* (ISO 8601; the real time when absent)."""
    at = dt.datetime.fromisoformat(now) if now else None
    with database().session() as session:
        report = advance_clocks(session, get_settings(), at)
        session.commit()
    for action in report.actions:
        log.info("clock: %s", action)
    return report.actions


def recover_once() -> list[int]:
    settings = get_settings()
    with database().session() as session:
        sent = recover_jobs(session=session, settings=settings, queue=CeleryJobQueue())
    if sent:
        log.warning("re-sent lost jobs %s", sent)
    return sent


def _recovery_loop() -> None:
    while not _stop.wait(get_settings().job_recovery_interval_s):
        try:
            recover_once()
        except Exception:  # keep watching; the next round may succeed
            log.exception("job recovery round failed")


@worker_process_init.connect
def _after_fork(**_: object) -> None:
    # A forked pool process must not share the parent's database connections.
    if database.cache_info().currsize:
        database().engine.dispose(close=False)
    database.cache_clear()


@worker_ready.connect
def _on_ready(**_: object) -> None:
    recover_once()
    threading.Thread(target=_recovery_loop, name="job-recovery", daemon=True).start()


@worker_shutdown.connect
def _on_shutdown(**_: object) -> None:
    _stop.set()
