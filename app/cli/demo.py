"""``endpoints-portal demo``: the demo results, into an empty database."""

from __future__ import annotations

import click

from app.cli.common import migrate_database
from app.settings import Settings, get_settings


def load_demo_if_empty(settings: Settings) -> int:
    from app.db.session import Database
    from app.demo.load import is_empty, load_demo

    database = Database(settings.effective_database_url)
    try:
        if not is_empty(database):
            return 0
        click.echo(
            "empty database: loading the demo results (ENDPOINTS_PORTAL_DEMO_DATA=0 skips it)"
        )
        return load_demo(database, settings)
    finally:
        database.dispose()


@click.command("demo", short_help="load the demo results into an empty database")
def demo() -> None:
    """Load the demo results into an empty database (nothing when it is not empty)."""
    settings = get_settings()
    migrate_database(settings)
    loaded = load_demo_if_empty(settings)
    click.echo(
        f"{loaded} demo submission(s) loaded"
        if loaded
        else "the database is not empty; nothing loaded"
    )
