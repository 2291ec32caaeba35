"""What the ``users`` commands share: an account refusal said as an error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.cli.kit import Failure

if TYPE_CHECKING:
    from app.accounts.services.accounts import AccountError


def account_failure(exc: AccountError) -> Failure:
    """The refusal, and where it is an organisation to choose, the ways to choose it."""
    candidates = getattr(exc, "candidates", [])
    hints = [f"--join {org.slug}\t(joins {org.name})" for org in candidates]
    return Failure(exc.message, hints=hints)
