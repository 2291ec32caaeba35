"""The Celery application as the portal configures it, and the job queue that sends to it.

The web process only sends (a task by name); the worker process (``worker/``) registers
the tasks and runs them. Both build their Celery app here, so the web never imports the
worker.

Late acknowledgement and a prefetch of one: a worker that dies mid-task leaves its
message to be redelivered, and the job row (not Celery's result backend) says where
the work stands.
"""

from __future__ import annotations

from collections.abc import Mapping

from celery import Celery

from app.jobs.queue import VERDICT_QUEUE, WORK_QUEUE, task_name
from app.settings import Settings
from app.wakeup import wakeful

CLOCK_TASK = "portal.advance_clocks"
EXPIRE_RUNS_TASK = "portal.expire_runs"
WEBHOOKS_TASK = "portal.deliver_webhooks"


def make_celery(settings: Settings, include: tuple[str, ...] = ()) -> Celery:
    """*include*: the modules that register tasks (the worker's; the web sends only)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # The embedded broker rings its consumers when a job is stored (app.wakeup).
    broker = wakeful(settings.broker_url)
    app = Celery("endpoints_portal", broker=broker, include=list(include))
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_default_queue=WORK_QUEUE,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_concurrency=settings.worker_concurrency,
        # The review clocks (rules §11.3): penalties, phases, embargo releases, e-mail.
        beat_schedule={
            "review-clocks": {"task": CLOCK_TASK, "schedule": settings.clock_interval_s},
            # Measured runs past their expiry that no live submission uses.
            "expire-runs": {"task": EXPIRE_RUNS_TASK, "schedule": settings.run_expiry_interval_s},
            # The record's events told to the webhooks, and the deliveries due again.
            "webhooks": {"task": WEBHOOKS_TASK, "schedule": settings.webhook_interval_s},
        },
        beat_schedule_filename=str(settings.data_dir / "celerybeat-schedule"),
    )
    return app


class CeleryJobQueue:
    """The services' JobQueue, backed by Celery: a job is sent to its kind's task, on its
    kind's queue (*queues*: by kind, ``app.jobs.kinds.queues_of``; the work queue for any
    other)."""

    def __init__(self, app: Celery, queues: Mapping[str, str]) -> None:
        self.app = app
        self.queues = dict(queues)

    def send(self, job_id: int, kind: str, delay_s: float = 0.0) -> None:
        queue = self.queues.get(kind, WORK_QUEUE)
        self.app.send_task(task_name(kind), args=[job_id], countdown=delay_s or None, queue=queue)


def worker_queues(verdicts_only: bool) -> list[str]:
    """The queues a worker takes jobs from."""
    return [VERDICT_QUEUE] if verdicts_only else [VERDICT_QUEUE, WORK_QUEUE]
