"""The ``endpoints-portal`` group: every command, each from its own module, imported when
that command runs. A command line pays for what it uses: ``users list`` does not import
the official checker (``check``) or the ledger's verifier (``verify``), which cost more
than a second of every start when the group imported them all."""

from __future__ import annotations

import importlib
from typing import Any

import click

from harness.cli.kit import group

# name: "module:attribute" of the command.
COMMANDS: dict[str, str] = {
    "serve": "app.cli.serve:serve",
    "web": "app.cli.web:web",
    "worker": "app.cli.worker:worker_process",
    "scheduler": "app.cli.scheduler:scheduler",
    "clock": "app.cli.clock:clock",
    "migrate": "app.cli.migrate:migrate",
    "demo": "app.cli.demo:demo",
    "users": "app.cli.users:users",
    "orgs": "app.cli.orgs:orgs",
    "super-passes": "app.cli.super_passes:super_passes",
    "storage": "app.cli.storage:storage",
    "publish": "app.cli.publish:publish",
    "check": "app.cli.check:check",
    "mcp": "app.cli.assistant:assistant",
    "keys": "app.cli.keys:keys",
    "verify": "app.cli.verify:verify",
}


class LazyGroup(click.Group):
    """A group whose commands are named here and imported when one is resolved (a run,
    or ``--help``, which lists them all)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        module, _, attribute = COMMANDS[cmd_name].partition(":")
        command: Any = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command) and command.name == cmd_name, cmd_name
        return command


@group("MLPerf Endpoints submission portal.", cls=LazyGroup)
@click.version_option(package_name="endpoints-portal")
def portal() -> None:
    pass
