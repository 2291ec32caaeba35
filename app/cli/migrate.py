"""``endpoints-portal migrate``: the database to its latest schema."""

from __future__ import annotations

import click

from app.cli.common import migrate_database
from app.settings import get_settings


@click.command("migrate", short_help="apply database migrations")
def migrate() -> None:
    """Apply the database migrations (safe to run again)."""
    settings = get_settings()
    migrate_database(settings)
    engine = settings.effective_database_url.split("://")[0]
    click.echo(f"database is at the latest schema ({engine})")
