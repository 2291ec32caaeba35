"""``endpoints-portal super-passes list``."""

from __future__ import annotations

import click

from app.cli.common import database_session
from app.settings import get_settings
from harness.cli.kit import emit_json, json_option


@click.command("list", short_help="the sizes that differ from one pass")
@json_option
def list_super_passes(as_json: bool) -> None:
    """The super-pass sizes that differ from one pass over the dataset, with their source
    (rules §2.1)."""
    from app.checks.domain.datasets import pass_size
    from app.runs.services.super_passes import defined_super_passes

    with database_session(get_settings()) as session:
        defined = sorted(defined_super_passes(session).items())
    rows = [
        {"dataset": dataset, "size": size, "pass_size": pass_size(dataset), "source": source}
        for dataset, (size, source) in defined
    ]
    if as_json:
        emit_json(rows)
        return
    for dataset, (size, source) in defined:
        one_pass = pass_size(dataset)
        of_pass = f"{size / one_pass:.3g} of a pass" if one_pass else "size unknown"
        click.echo(f"{dataset}\t{size}\t{of_pass}\t{source}")
