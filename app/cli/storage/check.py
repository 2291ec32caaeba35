"""``endpoints-portal storage check``."""

from __future__ import annotations

import click

from app.settings import get_settings
from harness.cli.kit import Failure


@click.command("check", short_help="write, read back and remove an object")
@click.option("--create", is_flag=True, help="make the S3 bucket first if it is not there")
def check_store(create: bool) -> None:
    """Write, read back and remove an object in the configured store."""
    from app.storage import StorageError, artifact_store, private_folder
    from app.storage.s3 import S3Store
    from app.storage.transfer import probe

    settings = get_settings()
    try:
        store = artifact_store(settings)
        if create and isinstance(store, S3Store) and store.ensure_bucket():
            click.echo(f"made the bucket {store.bucket}")
        probe(store, private_folder(settings.cache_dir) / "transfer")
    except (StorageError, ValueError) as exc:
        raise Failure(str(exc)) from None
    click.echo(f"{store.location}: writes, reads back and removes an object")
