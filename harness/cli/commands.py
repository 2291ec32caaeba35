"""The ``endpoints-harness`` group: every command, each from its own module."""

from __future__ import annotations

import click

from harness.cli.analyze import analyze
from harness.cli.count_part import count_part
from harness.cli.kit import group
from harness.cli.recompute import recompute
from harness.cli.report import report
from harness.cli.run import run
from harness.cli.search import search
from harness.cli.serve_sim import serve_sim
from harness.cli.sweep import sweep


@group("Measure an OpenAI-compatible endpoint as the official client does.")
@click.version_option(package_name="endpoints-portal")
def harness() -> None:
    pass


COMMANDS: tuple[click.Command, ...] = (
    run, recompute, count_part, analyze, report, sweep, search, serve_sim
)  # fmt: skip
for command in COMMANDS:
    harness.add_command(command)
