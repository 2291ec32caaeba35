"""``endpoints-portal scheduler``: the periodic jobs' scheduler (one per deployment)."""

from __future__ import annotations

import click


@click.command("scheduler", short_help="run the scheduler of the review clocks")
@click.option("--loglevel", default="INFO", show_default=True)
def scheduler(loglevel: str) -> None:
    """Run the scheduler of the review clocks and the other periodic jobs (one per
    deployment)."""
    import worker.tasks  # noqa: F401  (registers the tasks)
    from worker.celery_app import celery_app

    celery_app.start(["beat", "--loglevel", loglevel])
