"""``endpoints-portal publish``: a cohort's due results, released."""

from __future__ import annotations

import datetime as dt

import click

from app.cli.common import database_session, now_option, refused
from app.settings import get_settings
from harness.cli.kit import emit_json, json_option


@click.command("publish", short_help="publish a cohort's due results")
@click.argument("cohort")
@now_option("the time to publish at (default: now)")
@click.option(
    "--actor", default="chair (CLI)", show_default=True, help="who publishes, for the record"
)
@json_option
def publish(cohort: str, now: dt.datetime | None, actor: str, as_json: bool) -> None:
    """Release COHORT (e.g. 2026-12-C0) as the chair's API does: at its time, the one due
    now."""
    from app.core.refusals import Refused
    from app.review.services.releases import publish_cohort

    settings = get_settings()
    with database_session(settings, migrate=False) as session:
        try:
            published = publish_cohort(
                session=session, settings=settings, cohort_id=cohort, at=now, actor=actor
            )
        except Refused as exc:
            raise refused(exc) from None
        session.commit()
        rows = [
            {"submission": p.submission.public_id, "status": str(p.status), "cohort": p.cohort}
            for p in published
        ]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        click.echo(f"published {row['submission']} as {row['status']} in {row['cohort']}")
    click.echo(f"{len(rows)} publication(s) in {cohort}")
