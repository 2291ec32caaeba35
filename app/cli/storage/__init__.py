"""``endpoints-portal storage``: the artifact store."""

from __future__ import annotations

from app.cli.storage.check import check_store
from app.cli.storage.migrate import migrate_store
from harness.cli.kit import group


@group(
    "The artifact store: check it, or copy to another.",
    "the artifact store: check it, or copy it",
)
def storage() -> None:
    pass


storage.add_command(check_store)
storage.add_command(migrate_store)
