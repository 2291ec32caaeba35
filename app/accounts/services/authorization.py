"""The one authorisation rule (``app.core.authorization``) asked about a stored
submission: the caller's standing to it, and a refusal raised as the services' error."""

from __future__ import annotations

from typing import Protocol

from app.accounts.services.accounts import Principal
from app.core.authorization import ROLE_SCOPES, Action, Actor, Role, Scope, actor, may
from app.core.refusals import Refused
from app.db.models import User


class NotAllowed(Refused):
    pass


class Owned(Protocol):
    """What the rule asks of what is acted on: a submission, a measured run, a submission
    registered from runs: whose it is."""

    @property
    def organization_id(self) -> int: ...


def actor_of(
    who: Principal | User | None,
    submission: Owned | None,
    scopes: frozenset[Scope] | None = None,
) -> Actor:
    """A signed-in principal (its token's or session's scopes) or a stored user (*scopes*,
    the caller's token's, else every scope its role has), as the rules see them for
    *submission* (or another thing an organisation owns; None: for nothing in
    particular)."""
    if who is None:
        return Actor()
    if isinstance(who, Principal):
        role, user_id, scopes = who.role, who.user_id, who.scopes
    else:
        role, user_id = Role(who.role), who.id
        scopes = ROLE_SCOPES[role] if scopes is None else scopes
    org = who.organization_id
    ours = submission is not None and org is not None and org == submission.organization_id
    reviews = submission is not None and getattr(submission, "reviewer_id", None) == user_id
    return actor(
        scopes,
        in_organization=org is not None,
        own_organization=ours,
        assigned_reviewer=reviews,
        role=role,
    )


def authorize(who: Principal | User | None, submission: Owned, action: Action) -> None:
    """Raise unless *who* may take *action* on *submission*."""
    refusal = may(actor_of(who, submission), action)
    if refusal is not None:
        raise NotAllowed(refusal.code, refusal.message, refusal.kind)
