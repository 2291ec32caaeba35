"""Thin tasks. Each opens a session, calls one service and commits."""

from __future__ import annotations

import logging
import threading
from functools import lru_cache

from celery.signals import worker_process_init, worker_ready, worker_shutdown

from app.db.models import Job
from app.db.session import Database
from app.services.checks import fail_check, run_checks
from app.services.recovery import recover_jobs
from app.services.reproductions import fail_reproduction, run_reproduction
from app.settings import get_settings

from .celery_app import CeleryJobQueue, celery_app

log = logging.getLogger(__name__)
RECOVERY_INTERVAL_S = 30.0
_stop = threading.Event()


@lru_cache(maxsize=1)
def database() -> Database:
    return Database(get_settings().effective_database_url)


@celery_app.task(name="portal.check_submission")
def check_submission(job_id: int) -> None:
    settings = get_settings()
    with database().session() as session:
        try:
            run_checks(session=session, settings=settings, job_id=job_id)
        except Exception as exc:  # the job row must say why, whatever went wrong
            log.exception("check job %s failed", job_id)
            session.rollback()
            job = session.get(Job, job_id)
            if job is not None:
                fail_check(
                    session=session,
                    job=job,
                    reason=f"internal error while checking: {type(exc).__name__}: {exc}",
                )


@celery_app.task(name="portal.reproduce_point")
def reproduce_point(job_id: int) -> None:
    settings = get_settings()
    with database().session() as session:
        try:
            run_reproduction(session=session, settings=settings, job_id=job_id)
        except Exception as exc:  # the job row must say why, whatever went wrong
            log.exception("reproduction job %s failed", job_id)
            session.rollback()
            job = session.get(Job, job_id)
            if job is not None:
                fail_reproduction(
                    session=session,
                    job=job,
                    reason=f"internal error while reproducing: {type(exc).__name__}: {exc}",
                )


def recover_once() -> list[int]:
    settings = get_settings()
    with database().session() as session:
        sent = recover_jobs(session=session, settings=settings, queue=CeleryJobQueue())
    if sent:
        log.warning("re-sent lost jobs %s", sent)
    return sent


def _recovery_loop() -> None:
    while not _stop.wait(RECOVERY_INTERVAL_S):
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
