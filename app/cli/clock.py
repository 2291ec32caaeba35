"""``endpoints-portal clock``: the review clocks, once."""

from __future__ import annotations

import datetime as dt

import click

from app.cli.common import database_session, now_option
from app.settings import get_settings
from harness.cli.kit import emit_json, json_option


@click.command("clock", short_help="run the review clocks once")
@now_option("the time to run them at (default: now)")
@json_option
def clock(now: dt.datetime | None, as_json: bool) -> None:
    """Run the review clocks once: penalties, phases, embargo releases (an operator's or
    a test's controllable clock)."""
    from app.review.services.ticks import advance_clocks

    settings = get_settings()
    with database_session(settings, migrate=False) as session:
        report = advance_clocks(session, settings, now)
        session.commit()
    if as_json:
        emit_json({"now": report.now.isoformat(), "actions": report.actions})
        return
    for action in report.actions:
        click.echo(action)
    click.echo(f"{len(report.actions)} action(s) at {report.now.isoformat()}")
