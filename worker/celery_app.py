"""The worker's Celery application, configured from the portal settings (app.broker)."""

from __future__ import annotations

from app.broker import CeleryJobQueue, make_celery
from app.jobs.kinds import queues_of
from app.pipeline import JOB_KINDS
from app.settings import get_settings

celery_app = make_celery(get_settings(), include=("worker.tasks",))


def job_queue() -> CeleryJobQueue:
    return CeleryJobQueue(celery_app, queues_of(JOB_KINDS))
