"""Thin tasks. Each opens a session, calls one service and commits."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from functools import lru_cache

from celery.signals import worker_process_init, worker_ready, worker_shutdown

from app.broker import CLOCK_TASK, EXPIRE_RUNS_TASK, WEBHOOKS_TASK
from app.db.models import utcnow
from app.db.session import Database
from app.jobs.kinds import JobKind
from app.jobs.recovery import recover_jobs
from app.jobs.runner import run_job as run_one
from app.measurements.services.registry import expire_runs as remove_expired_runs
from app.pipeline import JOB_KINDS
from app.review.services.ticks import advance_clocks
from app.settings import get_settings
from app.storage import private_folder
from app.submission_api.services.transfers import sweep_staging
from app.webhooks.services.deliveries import collect, deliver_next
from worker.celery_app import celery_app, job_queue

log = logging.getLogger(__name__)
_stop = threading.Event()


@lru_cache(maxsize=1)
def database() -> Database:
    return Database(get_settings().effective_database_url)


def run_job(kind: JobKind, job_id: int) -> None:
    """Open a session, run one job (app.jobs.runner says what becomes of it)."""
    with database().session() as session:
        run_one(kind, session=session, settings=get_settings(), job_id=job_id, queue=job_queue())


def _task_for(kind: JobKind) -> None:
    def task(job_id: int) -> None:
        run_job(kind, job_id)

    # Registered by call, not as a decorator: Celery is untyped, the function stays typed.
    celery_app.task(name=kind.task)(task)


# One task per kind of job (the registry: app.pipeline.JOB_KINDS).
for _kind in JOB_KINDS.values():
    _task_for(_kind)


def run_clocks(now: str | None = None) -> list[str]:
    """What the review clocks do by *now* (ISO 8601; the real time when absent)."""
    at = dt.datetime.fromisoformat(now) if now else None
    with database().session() as session:
        report = advance_clocks(session, get_settings(), at)
        session.commit()
    for action in report.actions:
        log.info("clock: %s", action)
    return report.actions


celery_app.task(name=CLOCK_TASK, ignore_result=True)(run_clocks)


def expire_runs() -> list[str]:
    """Remove the measured runs past their expiry that no live submission uses, and the
    staging objects of signed uploads that are over."""
    settings = get_settings()
    with database().session() as session:
        gone = remove_expired_runs(session, settings)
        session.commit()
        swept = sweep_staging(session, settings, utcnow())
        session.commit()
    if gone:
        log.info("expired runs removed: %s", ", ".join(gone))
    if swept:
        log.info("staging objects of %d finished upload(s) removed", swept)
    return gone


celery_app.task(name=EXPIRE_RUNS_TASK, ignore_result=True)(expire_runs)


def recover_once() -> list[int]:
    settings = get_settings()
    with database().session() as session:
        sent = recover_jobs(session=session, settings=settings, queue=job_queue(), kinds=JOB_KINDS)
    if sent:
        log.warning("re-sent lost jobs %s", sent)
    return sent


def _recovery_loop() -> None:
    while not _stop.wait(get_settings().job_recovery_interval_s):
        try:
            recover_once()
        except Exception:  # keep watching; the next round may succeed
            log.exception("job recovery round failed")


def deliver_webhooks(most: int = 100) -> int:
    """The record's new events become deliveries, and up to *most* due ones are sent,
    each committed on its own (a slow receiver holds no lock over the others)."""
    settings = get_settings()
    sent = 0
    with database().session() as session:
        collect(session, settings)
        session.commit()
        while sent < most and deliver_next(session, settings) is not None:
            session.commit()
            sent += 1
    return sent


celery_app.task(name=WEBHOOKS_TASK, ignore_result=True)(deliver_webhooks)


def _after_fork(**_: object) -> None:
    # A forked pool process must not share the parent's database connections.
    if database.cache_info().currsize:
        database().engine.dispose(close=False)
    database.cache_clear()


def _on_ready(**_: object) -> None:
    private_folder(get_settings().cache_dir)  # refused at start, naming the folder
    recover_once()
    threading.Thread(target=_recovery_loop, name="job-recovery", daemon=True).start()


def _on_shutdown(**_: object) -> None:
    _stop.set()


worker_process_init.connect(_after_fork)
worker_ready.connect(_on_ready)
worker_shutdown.connect(_on_shutdown)
