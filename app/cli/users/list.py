"""``endpoints-portal users list``."""

from __future__ import annotations

import click

from app.cli.common import database_session
from app.settings import get_settings
from harness.cli.kit import emit_json, json_option


@click.command("list", short_help="list the users")
@json_option
def list_users(as_json: bool) -> None:
    """List the users: e-mail, role, and whether the account is active."""
    from sqlalchemy import select

    from app.db.models import User

    with database_session(get_settings()) as session:
        rows = [
            {"email": u.email, "role": u.role.value, "active": u.is_active}
            for u in session.scalars(select(User).order_by(User.email))
        ]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        click.echo(f"{row['email']}\t{row['role']}{'' if row['active'] else ' (inactive)'}")
