"""``endpoints-portal super-passes set``."""

from __future__ import annotations

import datetime as dt

import click

from app.cli.common import database_session
from app.settings import get_settings
from harness.cli.kit import Failure


@click.command("set", short_help="set a dataset's super-pass size")
@click.argument("dataset")
@click.argument("size", type=int)
@click.option("--source", required=True, help="where the size comes from")
def set_super_pass(dataset: str, size: int, source: str) -> None:
    """Set DATASET's (a dataset of the catalogue, e.g. cnn_dailymail) super-pass SIZE in
    requests, with the --source it comes from."""
    from app.runs.services.super_passes import SuperPassRefused, define_super_pass

    settings = get_settings()
    with database_session(settings) as session:
        try:
            define_super_pass(
                session, settings, dataset, size, source, clock=lambda: dt.datetime.now(dt.UTC)
            )
        except SuperPassRefused as exc:
            raise Failure(str(exc)) from None
        session.commit()
