"""``endpoints-portal users create``."""

from __future__ import annotations

import os
import sys

import click

from app.cli.common import database_session
from app.cli.users.common import account_failure
from app.core.authorization import Role
from app.settings import get_settings


def _password(from_stdin: bool) -> str:
    """From standard input (--password-stdin), the environment, or a prompt."""
    import getpass

    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    if os.environ.get("ENDPOINTS_PORTAL_NEW_PASSWORD"):
        return os.environ["ENDPOINTS_PORTAL_NEW_PASSWORD"]
    return getpass.getpass("password: ")


@click.command("create", short_help="create a user")
@click.argument("email")
@click.option("--role", type=click.Choice([r.value for r in Role]), required=True)
@click.option("--name", default=None, help="how the user is shown")
@click.option("--org", default=None, help="the user's organisation")
@click.option("--password-stdin", is_flag=True, help="read the password from standard input")
def create(email: str, role: str, name: str | None, org: str | None, password_stdin: bool) -> None:
    """Create a user (password from --password-stdin, ENDPOINTS_PORTAL_NEW_PASSWORD or a
    prompt)."""
    from app.accounts.services.accounts import AccountError, create_user

    with database_session(get_settings()) as session:
        try:
            created = create_user(
                session=session,
                email=email,
                password=_password(password_stdin),
                role=Role(role),
                display_name=name,
                organization=org,
            )
        except AccountError as exc:
            raise account_failure(exc) from None
        session.commit()
        click.echo(f"created {created.email} ({created.role})")
