"""What the portal's commands share: the database they work on, a settable now, and a
service's refusal said as an error."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

from app.settings import Settings
from harness.cli.kit import Failure

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:  # the commands import what they use, when they run
    from sqlalchemy.orm import Session

    from app.core.refusals import Refused


# Where a web server listens: an address, or a socket already bound and listening.
address_options = [
    click.option("--host", default="127.0.0.1", show_default=True),
    click.option("--port", type=int, default=8000, show_default=True),
    click.option(
        "--fd",
        type=int,
        default=None,
        help="serve on this socket, already bound and listening (a service manager's, or a "
        "test's), instead of --host and --port",
    ),
]


def listening(command: F) -> F:
    """*command* with the web server's address options."""
    for option in reversed(address_options):
        command = option(command)
    return command


def migrate_database(settings: Settings) -> None:
    from app.db.migrate import upgrade

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.effective_database_url)


@contextmanager
def database_session(settings: Settings, *, migrate: bool = True) -> Iterator[Session]:
    """A session on the (migrated) database, closed with the database after the command."""
    from app.db.session import Database

    if migrate:
        migrate_database(settings)
    database = Database(settings.effective_database_url)
    try:
        with database.session() as session:
            yield session
    finally:
        database.dispose()


def refused(exc: Refused) -> Failure:
    return Failure(f"{exc.message} ({exc.code})")


class AwareTime(click.ParamType[dt.datetime]):
    """``--now``: an ISO 8601 time with its zone, for operators and tests that act at a
    set time."""

    name = "ISO-8601-TIME"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> dt.datetime:  # fmt: skip
        if isinstance(value, dt.datetime):
            return value
        try:
            now = dt.datetime.fromisoformat(str(value))
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 time", param, ctx)
        if now.tzinfo is None:
            self.fail("needs a time zone, e.g. 2026-12-01T09:00:00+00:00", param, ctx)
        return now


def now_option(help_text: str) -> Callable[[F], F]:
    return click.option("--now", type=AwareTime(), default=None, help=help_text)
