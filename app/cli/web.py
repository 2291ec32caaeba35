"""``endpoints-portal web``: a deployment's web processes alone."""

from __future__ import annotations

import click

from app.cli.common import listening


@click.command("web", short_help="run web processes only (deployments)")
@listening
@click.option("--workers", type=int, default=1, help="web processes")
def web(host: str, port: int, workers: int, fd: int | None) -> None:
    """Run web processes only (a deployment runs its workers and migrations apart), with
    the portal's server settings (timeouts, header limits); ``uvicorn app.asgi:app``
    alone would run without them."""
    from app.web import server

    server.run("app.asgi:app", host=host, port=port, workers=workers, fd=fd)
