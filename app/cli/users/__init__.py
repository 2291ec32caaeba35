"""``endpoints-portal users``: accounts and API tokens (the first admin comes from here)."""

from __future__ import annotations

import click

from app.cli.users.create import create
from app.cli.users.invite import invite
from app.cli.users.list import list_users
from app.cli.users.revoke_token import revoke_token
from app.cli.users.token import token
from harness.cli.kit import group


@group(
    "Accounts and API tokens (the first admin comes from here).",
    "accounts and API tokens",
)
def users() -> None:
    pass


COMMANDS: tuple[click.Command, ...] = (create, token, invite, revoke_token, list_users)
for command in COMMANDS:
    users.add_command(command)
