"""``endpoints-portal users token``."""

from __future__ import annotations

import click

from app.cli.common import database_session
from app.cli.users.common import account_failure
from app.core.authorization import Scope
from app.settings import get_settings


@click.command("token", short_help="issue an API token (shown once)")
@click.argument("email")
@click.option("--name", required=True, help="what the token is for")
@click.option(
    "--scope",
    multiple=True,
    type=click.Choice([s.value for s in Scope]),
    help="repeatable; default: every scope of the user's role",
)
def token(email: str, name: str, scope: tuple[str, ...]) -> None:
    """Issue an API token for EMAIL: printed once, on standard output (the rest on
    stderr), so a script can take it."""
    from sqlalchemy import select

    from app.accounts.services.accounts import AccountError, issue_token
    from app.core.refusals import Kind
    from app.db.models import User

    with database_session(get_settings()) as session:
        try:
            user = session.scalar(select(User).where(User.email == email.lower()))
            if user is None:
                raise AccountError("no-user", f"no user {email}", Kind.NOT_FOUND)
            issued, plaintext = issue_token(
                session=session, user=user, name=name, scopes=list(scope) or None
            )
        except AccountError as exc:
            raise account_failure(exc) from None
        session.commit()
        click.echo(
            f"token {issued.prefix}… with scopes {', '.join(issued.scopes)}; it is shown only now:",
            err=True,
        )
        click.echo(plaintext)
