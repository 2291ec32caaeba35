"""``endpoints-portal orgs set``."""

from __future__ import annotations

import click

from app.cli.common import database_session, refused
from app.settings import get_settings


@click.command("set", short_help="change an organisation")
@click.argument("slug")
@click.option("--country", default=None, help="ISO 3166-1 alpha-2 (its public holidays)")
@click.option("--subdivision", default=None, help="e.g. CA (with --country US)")
@click.option("--committee", type=click.Choice(("yes", "no")), default=None,
              help="the chair's appointment (rules §4.4)")  # fmt: skip
def set_organization(
    slug: str, country: str | None, subdivision: str | None, committee: str | None
) -> None:
    """Change the organisation SLUG; prints it, as JSON, as it now is."""
    from app.core.refusals import Refused
    from app.review.services.organizations import (
        get_organization,
        organization_view,
        update_organization,
    )

    changes: dict[str, object] = {}
    if country is not None:
        changes["country"] = country
    if subdivision is not None:
        changes["subdivision"] = subdivision
    if committee is not None:
        changes["committee_appointed"] = committee == "yes"
    settings = get_settings()
    with database_session(settings) as session:
        try:
            org = update_organization(
                session=session,
                organization=get_organization(session, slug),
                **changes,  # type: ignore[arg-type]
            )
        except Refused as exc:
            raise refused(exc) from None
        session.commit()
        click.echo(organization_view(session, settings, org).model_dump_json())
