"""``endpoints-portal``: serve the portal, run its worker and clocks, manage accounts,
organisations and the store, publish a cohort, check a bundle locally.

In the official CLI's idiom (``harness.cli.kit``): a command group per noun (``users``,
``orgs``, ``super-passes``, ``storage``), one module per command, ``-j/--json`` where a
command prints records, errors as ``Error: …`` on stderr. The group is imported only when
a command runs, and each command imports what it uses when it runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.cli.kit import invoke


def main(argv: Sequence[str] | None = None) -> int:
    from app.cli.commands import portal

    return invoke(portal, argv, "endpoints-portal")
