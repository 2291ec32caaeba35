"""``endpoints-portal storage migrate``."""

from __future__ import annotations

import click

from app.settings import get_settings
from harness.cli.kit import EXIT_FAILED, EXIT_OK, Failure


@click.command("migrate", short_help="copy every artifact to another store")
@click.option("--to", "to", required=True, help="s3://bucket/prefix or file:///path")
@click.option("--create", is_flag=True, help="make the S3 bucket first if it is not there")
def migrate_store(to: str, create: bool) -> int:
    """Copy every archive and event log to another store, checking each hash (safe to run
    again); exit 1 when an object in this store is damaged."""
    from app.storage import StorageError, artifact_store, open_store, private_folder
    from app.storage.s3 import S3Store
    from app.storage.transfer import copy_objects

    settings = get_settings()
    try:
        source = artifact_store(settings)
        target = open_store(
            to,
            cache_dir=settings.cache_dir,
            cache_bytes=settings.storage_cache_bytes,
            attempts=settings.storage_attempts,
            timeout_s=settings.storage_timeout_s,
        )
        if target.location == source.location:
            raise Failure(f"{to} is the store the portal uses already")
        if create and isinstance(target, S3Store):
            target.ensure_bucket()
        scratch = private_folder(settings.cache_dir) / "transfer"
        report = copy_objects(
            source, target, scratch, lambda key, what: click.echo(f"{key}: {what}")
        )
    except (StorageError, ValueError) as exc:
        raise Failure(str(exc)) from None
    click.echo(
        f"{len(report.copied)} copied, {len(report.present)} there already, "
        f"{len(report.damaged)} damaged in the source, from {source.location} to "
        f"{target.location}"
    )
    if not report.ok:
        return EXIT_FAILED
    click.echo(f"every object checked; set ENDPOINTS_PORTAL_STORAGE_URL={to} to use it")
    return EXIT_OK
