"""Accounts a newcomer can get (issue 28): the chair invites by e-mail, the invited person
sets a password through a one-time, expiring link; someone without an account asks for
one from the sign-in page, and the request reaches the chairs' inbox.

A link's secret is shown (and e-mailed, where SMTP is configured) once and stored only
as its hash. It works once, until it expires, and a newer invitation to the same address
replaces it.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import (
    AccountError,
    create_user,
    new_organisation,
    organisation_named,
    organisations_like,
    user_by_email,
)
from app.accounts.services.notifications import (
    MAIL_ERRORS,
    chairs,
    mail_server,
    notify,
    portal_email,
)
from app.accounts.services.security import new_token, token_hash
from app.core.authorization import Role, Scope, may_invite
from app.core.refusals import Kind
from app.db.models import AccountRequest, Invitation, Organization, User, utcnow
from app.settings import Settings

log = logging.getLogger(__name__)
INVITATION_LIFETIME = dt.timedelta(days=7)
# Members act for an organisation: a submitter's or reviewer's invitation names one.
MEMBER_ROLES = frozenset({Role.SUBMITTER, Role.REVIEWER})
LONGEST_NAME = 200
LONGEST_MESSAGE = 2000


@dataclass(frozen=True)
class Invited:
    invitation: Invitation
    link: str  # the path with the secret: shown once, never stored
    emailed: bool


def join_path(secret: str) -> str:
    return f"/join/{secret}"


def _address(email: str) -> str:
    email = email.strip().lower()
    local, at, domain = email.partition("@")
    if (
        not at
        or not local
        or "." not in domain
        or len(email) > 320
        or any(c.isspace() for c in email)
    ):
        raise AccountError("bad-email", f"{email!r} is not an e-mail address")
    return email


def _name(value: str, field: str, required: bool) -> str | None:
    value = " ".join(value.split())
    if not value:
        if required:
            raise AccountError(f"no-{field}", f"the {field} is required")
        return None
    if len(value) > LONGEST_NAME:
        raise AccountError(f"long-{field}", f"the {field} has at most {LONGEST_NAME} characters")
    return value


class OrganisationChoice(AccountError):
    """The organisation an invitation names exists, or looks like one that does: the
    inviter must say whether the invited person joins it (never the default)."""

    def __init__(self, code: str, message: str, candidates: list[Organization]) -> None:
        super().__init__(code, message, Kind.CONFLICT)
        self.candidates = candidates


def _joined(session: Session, name: str | None, join: str | None, new: bool) -> Organization | None:
    """The organisation an invitation's holder joins: the existing one *join* names (the
    inviter's confirmation), or a new one called *name*, never an existing one by its
    spelling alone. Refused, with the organisations it looks like, when *name* is an
    existing organisation's, or looks like one and a new one is not confirmed."""
    if join:
        chosen = session.scalar(select(Organization).where(Organization.slug == join))
        if chosen is None:
            raise AccountError(
                "unknown-organization", f"there is no organisation {join!r}", Kind.NOT_FOUND
            )
        return chosen
    if name is None:
        return None
    alike = organisations_like(session, name)
    same = organisation_named(session, name)
    if same is not None:
        raise OrganisationChoice(
            "organisation-exists",
            f"{name!r} is the existing organisation {same.name!r}: confirm that the invited "
            "person joins it, or name another organisation",
            alike,
        )
    if alike and not new:
        names = ", ".join(repr(o.name) for o in alike)
        raise OrganisationChoice(
            "organisation-similar",
            f"{name!r} looks like the existing organisation {names}: confirm that the "
            "invited person joins it, or that a new organisation is meant",
            alike,
        )
    return new_organisation(session, name)


def invite(
    *,
    session: Session,
    settings: Settings,
    scopes: frozenset[Scope],
    inviter: User | None,
    email: str,
    role: Role,
    organization: str = "",
    join_organization: str | None = None,
    new_organization: bool = False,
    request_id: int | None = None,
    at: dt.datetime | None = None,
) -> Invited:
    """An invitation for *email* as *role* (of an organisation, for a member), from a
    caller with *scopes* (*inviter*: None for the operator's command line), answering
    the account request *request_id* if given. The organisation is the existing one
    *join_organization* names (by slug: the inviter confirmed it), or a new one called
    *organization* (*new_organization*: confirmed though it looks like an existing one).
    An earlier open invitation to the address is revoked; the link is e-mailed where SMTP
    is set."""
    at = at or utcnow()
    request = session.get(AccountRequest, request_id) if request_id is not None else None
    refusal = may_invite(scopes, role)
    if refusal is not None:
        raise AccountError(refusal.code, refusal.message, refusal.kind)
    address = _address(email)
    org = _name(
        organization, "organization", required=role in MEMBER_ROLES and not join_organization
    )
    if user_by_email(session, address) is not None:
        raise AccountError("exists", f"{address} has an account already", Kind.CONFLICT)
    joined = _joined(session, org, join_organization, new_organization)
    for earlier in open_invitations(session, at, email=address):
        earlier.revoked_at = at
    secret = new_token()
    invitation = Invitation(
        email=address,
        role=role,
        organization_id=joined.id if joined else None,
        organization=joined.name if joined else None,
        token_hash=token_hash(secret),
        invited_by=inviter,
        created_at=at,
        expires_at=at + INVITATION_LIFETIME,
        request_id=request.id if request else None,
    )
    session.add(invitation)
    if request is not None:
        request.handled_at, request.outcome = at, "invited"
    session.flush()
    link = join_path(secret)
    return Invited(invitation, link, _email_link(settings, invitation, link))


def _email_link(settings: Settings, invitation: Invitation, link: str) -> bool:
    """E-mail the link where SMTP is configured; the inviter is shown it either way."""
    if not settings.smtp_host:
        return False
    until = invitation.expires_at.strftime("%Y-%m-%d %H:%M UTC")
    message = portal_email(
        settings,
        invitation.email,
        "You are invited to the MLPerf Endpoints Portal",
        f"You are invited to the MLPerf Endpoints Portal as a {invitation.role.value}"
        + (f" of {invitation.organization}" if invitation.organization else "")
        + f". Choose your password here (the link works once, until {until}):\n\n"
        + f"{settings.public_link(link)}\n",
    )
    try:
        with mail_server(settings) as smtp:
            smtp.send_message(message)
    except MAIL_ERRORS as exc:
        log.warning("the invitation to %s was not e-mailed: %s", invitation.email, exc)
        return False
    return True


def open_invitations(
    session: Session, at: dt.datetime | None = None, email: str | None = None
) -> list[Invitation]:
    """Invitations neither accepted, revoked nor expired (of one address, if given)."""
    query = select(Invitation).where(
        Invitation.accepted_at.is_(None),
        Invitation.revoked_at.is_(None),
        Invitation.expires_at > (at or utcnow()),
    )
    if email is not None:
        query = query.where(Invitation.email == email)
    return list(session.scalars(query.order_by(Invitation.id.desc())))


def invitation_for(session: Session, secret: str, at: dt.datetime | None = None) -> Invitation:
    """The open invitation a link's secret names; refused, saying why, otherwise."""
    found = session.scalar(select(Invitation).where(Invitation.token_hash == token_hash(secret)))
    if found is None:
        raise AccountError(
            "invitation-unknown", "this invitation link is not valid", Kind.NOT_FOUND
        )
    if found.accepted_at is not None:
        raise AccountError(
            "invitation-used", "this invitation was used already: sign in instead", Kind.CONFLICT
        )
    if found.revoked_at is not None:
        raise AccountError(
            "invitation-revoked", "this invitation was withdrawn or replaced by a newer one",
            Kind.CONFLICT,
        )  # fmt: skip
    if found.expires_at <= (at or utcnow()):
        raise AccountError(
            "invitation-expired", "this invitation has expired: ask the chair for a new one",
            Kind.CONFLICT,
        )  # fmt: skip
    return found


def accept(
    *,
    session: Session,
    secret: str,
    password: str,
    repeated: str,
    display_name: str = "",
    at: dt.datetime | None = None,
) -> User:
    """The account an invitation opens, with the password its holder chose; the link
    works no more."""
    invitation = invitation_for(session, secret, at)
    if password != repeated:
        raise AccountError("password-mismatch", "the two passwords differ")
    joined = (
        session.get(Organization, invitation.organization_id)
        if invitation.organization_id is not None
        else invitation.organization  # made before organisations were chosen by identity
    )
    user = create_user(
        session=session,
        email=invitation.email,
        password=password,
        role=invitation.role,
        display_name=_name(display_name, "name", required=False),
        organization=joined,
    )
    invitation.accepted_at = at or utcnow()
    return user


def revoke(session: Session, invitation_id: int, at: dt.datetime | None = None) -> Invitation:
    invitation = session.get(Invitation, invitation_id)
    if invitation is None:
        raise AccountError("no-invitation", "no such invitation", Kind.NOT_FOUND)
    if invitation.accepted_at is None and invitation.revoked_at is None:
        invitation.revoked_at = at or utcnow()
    return invitation


def request_account(
    *,
    session: Session,
    email: str,
    display_name: str,
    organization: str,
    message: str = "",
    at: dt.datetime | None = None,
) -> AccountRequest:
    """A request for an account: kept, and in every chair's inbox."""
    address = _address(email)
    name = _name(display_name, "name", required=True)
    org = _name(organization, "organization", required=True)
    assert name is not None and org is not None
    if len(message) > LONGEST_MESSAGE:
        raise AccountError("long-message", f"the message has at most {LONGEST_MESSAGE} characters")
    request = AccountRequest(
        email=address,
        display_name=name,
        organization=org,
        message=message.strip(),
        created_at=at or utcnow(),
    )
    session.add(request)
    session.flush()
    notify(
        session,
        chairs(session),
        f"Account request: {name} ({org})",
        f"{name} <{address}> of {org} asks for an account."
        + (f" They write: {request.message}" if request.message else ""),
        f"/invitations#request-{request.id}",
    )
    return request


def open_requests(session: Session) -> list[AccountRequest]:
    return list(
        session.scalars(
            select(AccountRequest)
            .where(AccountRequest.handled_at.is_(None))
            .order_by(AccountRequest.id)
        )
    )


def decline(session: Session, request_id: int, at: dt.datetime | None = None) -> AccountRequest:
    request = session.get(AccountRequest, request_id)
    if request is None:
        raise AccountError("no-request", "no such account request", Kind.NOT_FOUND)
    if request.handled_at is None:
        request.handled_at, request.outcome = at or utcnow(), "declined"
    return request
