"""``endpoints-portal orgs``: organisations, their jurisdiction and committee seat."""

from __future__ import annotations

from app.cli.orgs.list import list_organizations
from app.cli.orgs.set import set_organization
from harness.cli.kit import group


@group(
    "Organisations: jurisdiction (holidays on the clocks) and committee appointment.",
    "organisations: jurisdiction, committee seat",
)
def orgs() -> None:
    pass


orgs.add_command(list_organizations)
orgs.add_command(set_organization)
