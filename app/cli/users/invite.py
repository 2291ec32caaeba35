"""``endpoints-portal users invite``."""

from __future__ import annotations

import click

from app.cli.common import database_session
from app.cli.users.common import account_failure
from app.core.authorization import Role, Scope
from app.settings import get_settings


@click.command("invite", short_help="invite someone: prints their one-time link")
@click.argument("email")
@click.option("--role", type=click.Choice([r.value for r in Role]), default="submitter",
              show_default=True)  # fmt: skip
@click.option("--org", default=None, help="a submitter's or reviewer's organisation")
@click.option("--join", default=None, metavar="SLUG", help="they join this existing organisation")
@click.option(
    "--new-organization",
    is_flag=True,
    help="--org is a new organisation, though it looks like an existing one",
)
def invite(email: str, role: str, org: str | None, join: str | None,
           new_organization: bool) -> None:  # fmt: skip
    """Invite EMAIL: prints their one-time link (e-mailed too where SMTP is set)."""
    from app.accounts.services.accounts import AccountError
    from app.accounts.services.invitations import invite as invite_someone

    settings = get_settings()
    with database_session(settings) as session:
        try:
            # The operator stands above the chair: any role may be invited from here.
            made = invite_someone(
                session=session,
                settings=settings,
                scopes=frozenset(Scope),
                inviter=None,
                email=email,
                role=Role(role),
                organization=org or "",
                join_organization=join,
                new_organization=new_organization,
            )
        except AccountError as exc:
            raise account_failure(exc) from None
        session.commit()
        sent = "e-mailed; " if made.emailed else ""
        until = f"{made.invitation.expires_at:%Y-%m-%d %H:%M} UTC"
        click.echo(
            f"invited {made.invitation.email} as {made.invitation.role.value} ({sent}"
            f"the link works once, until {until}; it is shown only now):",
            err=True,
        )
        click.echo(settings.public_link(made.link))
