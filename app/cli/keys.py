"""``endpoints-portal keys``: the key that signs the record's ledger."""

from __future__ import annotations

import click

from app.cli.common import database_session, refused
from app.settings import get_settings
from harness.cli.kit import emit_json, group, json_option


@group("The key that signs the record's ledger.", short_help="the ledger's signing key")
def keys() -> None:
    pass


@keys.command("show")
def show() -> None:
    """Print the current public key (PEM), as /.well-known/release-signing-key.pem does."""
    from app.publishing.services.signing import ledger_key

    click.echo(ledger_key(get_settings()).public_pem, nl=False)


@keys.command("rotate")
@json_option
def rotate(as_json: bool) -> None:
    """Replace the signing key with a new one. The change is an entry of the ledger signed
    by the key it retires; the old key's public half stays listed in
    /.well-known/release-signing-keys.json, so everything it signed can still be checked."""
    from app.core.refusals import Refused
    from app.publishing.domain.ledger import read_entry
    from app.publishing.services.ledger import rotate_key

    settings = get_settings()
    with database_session(settings, migrate=False) as session:
        try:
            entry = rotate_key(session, settings)
        except Refused as exc:
            raise refused(exc) from None
        session.commit()
        change = read_entry(entry.body)["change"]
    if as_json:
        emit_json({"entry": entry.seq, **change})
        return
    click.echo(f"signing key {change['previous_key_id']} retired; {change['new_key_id']} signs "
               f"from now on (ledger entry {entry.seq})")  # fmt: skip
