"""The ``endpoints-portal`` group: every command, each from its own module."""

from __future__ import annotations

import click

from app.cli.assistant import assistant
from app.cli.check import check
from app.cli.clock import clock
from app.cli.demo import demo
from app.cli.keys import keys
from app.cli.migrate import migrate
from app.cli.orgs import orgs
from app.cli.publish import publish
from app.cli.scheduler import scheduler
from app.cli.serve import serve
from app.cli.storage import storage
from app.cli.super_passes import super_passes
from app.cli.users import users
from app.cli.verify import verify
from app.cli.web import web
from app.cli.worker import worker_process
from harness.cli.kit import group


@group("MLPerf Endpoints submission portal.")
@click.version_option(package_name="endpoints-portal")
def portal() -> None:
    pass


COMMANDS: tuple[click.Command, ...] = (
    serve, web, worker_process, scheduler, clock, migrate, demo, users, orgs, super_passes,
    storage, publish, check, assistant, keys, verify,
)  # fmt: skip
for command in COMMANDS:
    portal.add_command(command)
