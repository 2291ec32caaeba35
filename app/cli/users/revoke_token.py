"""``endpoints-portal users revoke-token``."""

from __future__ import annotations

import click

from app.cli.common import database_session
from app.settings import get_settings
from harness.cli.kit import Failure


@click.command("revoke-token", short_help="revoke a token by its prefix")
@click.argument("prefix")
def revoke_token(prefix: str) -> None:
    """Revoke every token whose prefix is PREFIX (as ``users token`` printed it)."""
    from sqlalchemy import select

    from app.accounts.services.accounts import revoke_token as revoke
    from app.db.models import ApiToken

    with database_session(get_settings()) as session:
        rows = session.scalars(select(ApiToken).where(ApiToken.prefix == prefix)).all()
        if not rows:
            raise Failure(f"no token starts {prefix}")
        for row in rows:
            revoke(session=session, token=row)
        session.commit()
    click.echo(f"revoked {len(rows)} token(s)")
