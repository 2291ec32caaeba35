"""``endpoints-portal worker``: a Celery worker process."""

from __future__ import annotations

import os

import click

from app.broker import worker_queues
from app.core.policy import PolicyInvalid
from app.settings import get_settings, review_policy


@click.command("worker", short_help="run a Celery worker process")
@click.option("--concurrency", type=int, default=None, help="default: the setting")
@click.option("--loglevel", default="INFO", show_default=True)
@click.option("--beat", is_flag=True, help="also run the scheduler of the review clocks")
@click.option(
    "--verdicts-only",
    is_flag=True,
    help="take only the jobs a verdict waits on (uploads taken, checks), never a re-count "
    "or a reproduction: a deployment's one such worker keeps verdicts quick while the "
    "others are busy",
)
def worker_process(concurrency: int | None, loglevel: str, beat: bool, verdicts_only: bool) -> None:
    """Run a Celery worker process on the portal's queues."""
    settings = get_settings()
    try:
        # A broken review policy file stops the worker at start, naming the entry, as it
        # stops the web process, rather than failing the first job that reads it.
        review_policy(settings)
    except PolicyInvalid as exc:
        raise click.ClickException(str(exc)) from exc
    import worker.tasks  # noqa: F401  (registers the tasks)
    from worker.celery_app import celery_app

    argv = [
        "worker",
        "--loglevel",
        loglevel,
        "--concurrency",
        str(concurrency or settings.worker_concurrency),
        "--queues",
        ",".join(worker_queues(verdicts_only)),
        "--without-gossip",
        "--without-mingle",
        "--hostname",
        f"portal-worker-{os.getpid()}@%h",
    ]
    if beat:
        # One process also runs the scheduler (the embedded set-up); deployments run
        # `endpoints-portal scheduler` once instead.
        argv.append("--beat")
    celery_app.worker_main(argv)
