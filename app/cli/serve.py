"""``endpoints-portal serve``: the web portal and one worker process (``make run``)."""

from __future__ import annotations

import signal

import click

from app.cli.common import listening, migrate_database
from app.cli.demo import load_demo_if_empty
from app.cli.supervisor import WorkerSupervisor
from app.settings import get_settings


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


@click.command("serve", short_help="run the web portal and one worker process")
@listening
@click.option("--no-worker", is_flag=True, help="start the web process only")
def serve(host: str, port: int, no_worker: bool, fd: int | None) -> None:
    """Run the web portal and one worker process: what ``make run`` starts."""
    from app.main import create_app
    from app.submissions.services.storage import sweep_tmp
    from app.web import server

    settings = get_settings()
    migrate_database(settings)
    # The only web process is starting: no upload is in flight, whatever is in tmp is
    # what a killed process left half-written.
    sweep_tmp(settings.tmp_dir, older_than_s=0)
    if settings.demo_data:
        load_demo_if_empty(settings)
    supervisor = None if no_worker else WorkerSupervisor()
    if supervisor is not None:
        supervisor.start()
    where = f"the socket given (fd {fd})" if fd is not None else f"http://{host}:{port}"
    click.echo(f"Endpoints Portal on {where} (data in {settings.data_dir})")
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again; with the
    # default action that ends the process before `finally` stops the worker. Ours turns
    # it into an exit that runs the cleanup (exit status 143, as a SIGTERM'd process).
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        server.run(create_app(settings, serving=True), host=host, port=port, fd=fd)
    finally:
        if supervisor is not None:
            supervisor.stop()
