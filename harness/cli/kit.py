"""What the portal's and the harness's command lines share, in the official CLI's idiom
(click, as ``endpoints-submission-cli`` is written): a command group per noun, errors as
``Error: …`` on stderr, records as JSON with ``-j/--json``.

Exit statuses: 0 done; 1 what was looked at failed (a bundle rejected, an SLA missed);
2 the command could not do its work (bad input, a missing file, a refusal), as a usage
error is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import IO, Any, TypeVar

import click

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNUSABLE = 2

F = TypeVar("F", bound=Callable[..., Any])


class Failure(click.ClickException):
    """The command could not do its work; *hints* follow the message, one a line."""

    exit_code = EXIT_UNUSABLE

    def __init__(self, message: str, *, hints: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.hints = list(hints)

    def show(self, file: IO[Any] | None = None) -> None:
        said = click.style("Error:", fg="red", bold=True)
        click.echo(f"{said} {self.format_message()}", file=file, err=True)
        for hint in self.hints:
            click.echo(f"  {hint}", file=file, err=True)


class Failed(Failure):
    """What the command looked at failed (nothing to analyse, a bundle rejected)."""

    exit_code = EXIT_FAILED


def warn(message: str) -> None:
    click.echo(f"{click.style('Warning:', fg='yellow', bold=True)} {message}", err=True)


def note(message: str) -> None:
    """A line for the person at the terminal (stderr), apart from what the command prints."""
    click.echo(message, err=True)


def json_option(command: F) -> F:
    return click.option(
        "-j", "--json", "as_json", is_flag=True, default=False, help="Output raw JSON."
    )(command)


def emit_json(value: Any, *, indent: int | None = 2) -> None:
    click.echo(json.dumps(value, indent=indent, default=str))


def group(
    help_text: str, short_help: str | None = None, cls: type[click.Group] = click.Group
) -> Callable[[Callable[..., Any]], click.Group]:
    """A command group (the top one, or a noun's) whose ``-h`` is ``--help`` too."""
    return click.group(
        cls=cls,
        help=help_text,
        short_help=short_help,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


def invoke(command: click.Command, argv: Sequence[str] | None, prog_name: str) -> int:
    """Run *command* as a console script would, but answer the exit status instead of
    leaving the process: the tests and ``python -m`` call it alike."""
    try:
        result = command.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort:
        click.echo("Aborted!", err=True)
        return EXIT_FAILED
    return int(result or EXIT_OK)
