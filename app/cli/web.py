"""``endpoints-portal web``: a deployment's web processes alone."""

from __future__ import annotations

import click


@click.command("web", short_help="run web processes only (deployments)")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=8000, show_default=True)
@click.option(
    "--fd",
    type=int,
    default=None,
    help="serve on this socket, already bound and listening (a service manager's, or a "
    "test's), instead of --host and --port",
)
@click.option("--workers", type=int, default=1, help="web processes")
def web(host: str, port: int, workers: int, fd: int | None) -> None:
    """Run web processes only (a deployment runs its workers and migrations apart), with
    the portal's server settings (timeouts, header limits); ``uvicorn app.asgi:app``
    alone would run without them."""
    from app.web import server

    server.run("app.asgi:app", host=host, port=port, workers=workers, fd=fd)
