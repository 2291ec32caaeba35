"""The Celery application, configured from the portal settings.

Late acknowledgement and a prefetch of one: a worker that dies mid-task leaves its
message to be redelivered, and the job row (not Celery's result backend) says where
the work stands.
"""

from __future__ import annotations

from celery import Celery

from app.settings import Settings, get_settings

TASK_FOR_KIND = {
    "check_submission": "portal.check_submission",
    "reproduce_point": "portal.reproduce_point",
    "retokenize_point": "portal.retokenize_point",
}

CLOCK_TASK = "portal.advance_clocks"


def make_celery(settings: Settings) -> Celery:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    app = Celery("endpoints_portal", broker=settings.broker_url, include=["worker.tasks"])
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_default_queue="portal",
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_concurrency=settings.worker_concurrency,
        # The review clocks (rules §11.3): penalties, phases, embargo releases, e-mail.
        beat_schedule={
            "review-clocks": {"task": CLOCK_TASK, "schedule": settings.clock_interval_s}
        },
        beat_schedule_filename=str(settings.data_dir / "celerybeat-schedule"),
    )
    return app


celery_app = make_celery(get_settings())


class CeleryJobQueue:
    """The services' JobQueue, backed by Celery."""

    def __init__(self, app: Celery | None = None) -> None:
        self.app = app or celery_app

    def send(self, job_id: int, kind: str) -> None:
        self.app.send_task(TASK_FOR_KIND[kind], args=[job_id])
