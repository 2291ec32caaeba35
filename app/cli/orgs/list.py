"""``endpoints-portal orgs list``."""

from __future__ import annotations

import click

from app.cli.common import database_session
from app.settings import get_settings
from harness.cli.kit import emit_json, json_option


@click.command("list", short_help="list the organisations")
@json_option
def list_organizations(as_json: bool) -> None:
    """List the organisations: slug, name, jurisdiction and committee seat."""
    from app.review.services.organizations import list_organizations as organizations

    settings = get_settings()
    with database_session(settings) as session:
        rows = organizations(session, settings)
    if as_json:
        emit_json([row.model_dump(mode="json") for row in rows])
        return
    for row in rows:
        place = "-".join(x for x in (row.country, row.subdivision) if x)
        seat = "committee" if row.on_committee else ""
        appointed = " (appointed)" if row.committee_appointed else ""
        click.echo(f"{row.slug}\t{row.name}\t{place or '-'}\t{seat}{appointed}")
