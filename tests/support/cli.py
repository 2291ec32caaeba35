"""The command lines' parsing, without running a command: which command an argument list
reaches and with what parameters (what a deployment's compose file or a README names)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click


def resolved(group: click.Group, argv: Sequence[str]) -> tuple[click.Command, dict[str, Any]]:
    """The command *argv* reaches through *group*'s subgroups, and its parsed parameters;
    click.UsageError for an unknown command or option."""
    ctx = group.make_context(group.name or "cli", list(argv))
    command: click.Command = group
    while isinstance(command, click.Group):
        # What parsing left for the subcommand (click keeps it apart from its own args).
        rest = [*ctx._protected_args, *ctx.args]
        name, sub, args = command.resolve_command(ctx, rest)
        assert name is not None and sub is not None
        ctx = sub.make_context(name, args, parent=ctx)
        command = sub
    return command, ctx.params


def surface(command: click.Command) -> tuple[set[str], list[str]]:
    """A command's long options and its arguments' names, in order."""
    options = {o for p in command.params if isinstance(p, click.Option) for o in p.opts
               if o.startswith("--")}  # fmt: skip
    arguments = [p.name or "" for p in command.params if isinstance(p, click.Argument)]
    return options, arguments
