"""``endpoints-portal mcp``: the assistant's door over stdio, for an MCP client that starts
the server itself (the same tools as ``/mcp``; app/results/web/assistant.py)."""

from __future__ import annotations

import click


@click.command("mcp", short_help="the read-only MCP server, over stdio")
def assistant() -> None:
    """Serve the read-only MCP tools over standard input and output, from this portal's
    database (the settings of its environment), as ``/mcp`` serves them over HTTP."""
    from app.db.session import Database
    from app.results.web.assistant import assistant_server
    from app.settings import get_settings

    settings = get_settings()
    assistant_server(Database(settings.effective_database_url), settings).run("stdio")
