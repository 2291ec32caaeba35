"""The one authorisation rule (``app.core.authorization``) asked about a stored
submission: the caller's standing to it, and a refusal raised as the services' error."""

from __future__ import annotations

from app.accounts.services.accounts import Principal
from app.core.authorization import ROLE_SCOPES, Action, Actor, Role, Scope, actor, may
from app.core.refusals import Refused
from app.db.models import Submission, User


class NotAllowed(Refused):
    pass


def actor_of(
    who: Principal | User | None,
    submission: Submission | None,
    scopes: frozenset[Scope] | None = None,
) -> Actor:
    """A signed-in principal (its token's or session's scopes) or a stored user (*scopes*,
    the caller's token's, else every scope its role has), as the rules see them for
    *submission* (None: for no submission in particular)."""
    if who is None:
        return Actor()
    if isinstance(who, Principal):
        role, user_id, scopes = who.role, who.user_id, who.scopes
    else:
        role, user_id = Role(who.role), who.id
        scopes = ROLE_SCOPES[role] if scopes is None else scopes
    org = who.organization_id
    ours = submission is not None and org is not None and org == submission.organization_id
    reviews = submission is not None and submission.reviewer_id == user_id
    return actor(
        scopes,
        in_organization=org is not None,
        own_organization=ours,
        assigned_reviewer=reviews,
        role=role,
    )


def authorize(who: Principal | User | None, submission: Submission, action: Action) -> None:
    """Raise unless *who* may take *action* on *submission*."""
    refusal = may(actor_of(who, submission), action)
    if refusal is not None:
        raise NotAllowed(refusal.code, refusal.message, refusal.kind)
