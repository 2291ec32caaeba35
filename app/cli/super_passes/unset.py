"""``endpoints-portal super-passes unset``."""

from __future__ import annotations

import click

from app.cli.common import database_session
from app.settings import get_settings
from harness.cli.kit import Failure


@click.command("unset", short_help="back to one pass over the dataset")
@click.argument("dataset")
def unset_super_pass(dataset: str) -> None:
    """DATASET's super-pass back to one pass over the dataset."""
    from app.runs.services.super_passes import remove_super_pass

    with database_session(get_settings()) as session:
        if not remove_super_pass(session, dataset):
            raise Failure(f"no super-pass is defined for {dataset!r}")
        session.commit()
