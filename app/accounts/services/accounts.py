"""Accounts: users with roles, API tokens (shown once, stored hashed, scoped, revocable)
and browser sessions."""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.security import hash_password, new_token, token_hash, verify_password
from app.core.authorization import PermissionDenied, Role, Scope, scopes_for
from app.core.names import looks_like, organisation_key, slugify
from app.core.refusals import Kind, Refused
from app.db.models import ApiToken, Organization, User, WebSession, utcnow

SESSION_LIFETIME = dt.timedelta(hours=12)
MIN_PASSWORD_LENGTH = 12


class AccountError(Refused):
    pass


@dataclass(frozen=True)
class Principal:
    """Who is asking, and what they may do (a logged-in user or an API token)."""

    user_id: int
    email: str
    role: Role
    organization_id: int | None
    scopes: frozenset[Scope]

    def has(self, scope: Scope) -> bool:
        return scope in self.scopes


def organisation_named(session: Session, name: str) -> Organization | None:
    """The organisation whose name has *name*'s normalised form, if one exists."""
    return session.scalar(
        select(Organization).where(Organization.name_key == organisation_key(name))
    )


def organisations_like(session: Session, name: str) -> list[Organization]:
    """The organisations whose names are, or look like, *name* (``looks_like``)."""
    return [
        org
        for org in session.scalars(select(Organization).order_by(Organization.name))
        if looks_like(name, org.name)
    ]


def _free_slug(session: Session, name: str) -> str:
    base = slugify(name)
    slug, n = base, 1
    while session.scalar(select(Organization.id).where(Organization.slug == slug)) is not None:
        n += 1
        slug = f"{base[:60]}_{n}"
    return slug


def new_organisation(session: Session, name: str) -> Organization:
    """A new organisation called *name*; refused when one has its normalised form."""
    existing = organisation_named(session, name)
    if existing is not None:
        raise AccountError(
            "organisation-exists",
            f"{name!r} is the name of the existing organisation {existing.name!r}",
            Kind.CONFLICT,
        )
    org = Organization(slug=_free_slug(session, name), name=name, name_key=organisation_key(name))
    session.add(org)
    session.flush()
    return org


def organisation_for(session: Session, name: str) -> Organization:
    """The organisation called *name* by its normalised form, made if there is none: for
    the operator's command line and for uploads made without an account, where the name
    is the one the operator or the bundle gives."""
    return organisation_named(session, name) or new_organisation(session, name)


def create_user(
    *,
    session: Session,
    email: str,
    password: str,
    role: Role,
    display_name: str | None = None,
    organization: str | Organization | None = None,
) -> User:
    email = email.strip().lower()
    if "@" not in email:
        raise AccountError("bad-email", f"{email!r} is not an e-mail address")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(
            "weak-password", f"passwords need at least {MIN_PASSWORD_LENGTH} characters"
        )
    if session.scalar(select(User).where(User.email == email)) is not None:
        raise AccountError("exists", f"a user {email} exists already", Kind.CONFLICT)
    org = organization
    if isinstance(organization, str):
        org = organisation_for(session, organization) if organization.strip() else None
    user = User(
        email=email,
        display_name=display_name or email.split("@")[0],
        role=role.value,
        password_hash=hash_password(password),
        organization=org,
    )
    session.add(user)
    session.flush()
    return user


def authenticate(*, session: Session, email: str, password: str) -> User | None:
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    ok = verify_password(password, user.password_hash if user else None)
    return user if ok and user is not None and user.is_active else None


def _principal(user: User, scopes: frozenset[Scope]) -> Principal:
    return Principal(user.id, user.email, Role(user.role), user.organization_id, scopes)


def principal_of_user(user: User) -> Principal:
    """*user* acting with every scope of its role: for what is done on its behalf later,
    once what it asked for arrives (a bundle through a signed URL)."""
    return _principal(user, frozenset(scopes_for(Role(user.role))))


def issue_token(
    *, session: Session, user: User, name: str, scopes: list[str] | None = None
) -> tuple[ApiToken, str]:
    """A new token for *user*; the plaintext is returned once and never stored."""
    try:
        granted = scopes_for(Role(user.role), scopes)
    except (PermissionDenied, ValueError) as exc:
        raise AccountError("bad-scope", str(exc), Kind.FORBIDDEN) from exc
    plaintext = new_token()
    token = ApiToken(
        user=user,
        name=name,
        token_hash=token_hash(plaintext),
        prefix=plaintext[:10],
        scopes=sorted(s.value for s in granted),
    )
    session.add(token)
    session.flush()
    return token, plaintext


def revoke_token(*, session: Session, token: ApiToken) -> None:
    token.revoked_at = token.revoked_at or utcnow()


def principal_for_token(session: Session, plaintext: str) -> Principal | None:
    token = session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash(plaintext)))
    if token is None or token.revoked_at is not None or not token.user.is_active:
        return None
    token.last_used_at = utcnow()
    return _principal(token.user, frozenset(Scope(s) for s in token.scopes))


def start_session(*, session: Session, user: User) -> str:
    """A new browser session; returns the cookie value (only its hash is stored)."""
    secret = secrets.token_urlsafe(32)
    session.add(
        WebSession(user=user, token_hash=token_hash(secret), expires_at=utcnow() + SESSION_LIFETIME)
    )
    session.flush()
    return secret


def principal_for_session(session: Session, cookie: str) -> Principal | None:
    row = session.scalar(select(WebSession).where(WebSession.token_hash == token_hash(cookie)))
    if row is None or row.expires_at < utcnow() or not row.user.is_active:
        return None
    return _principal(row.user, frozenset(scopes_for(Role(row.user.role))))


def end_session(*, session: Session, cookie: str) -> None:
    row = session.scalar(select(WebSession).where(WebSession.token_hash == token_hash(cookie)))
    if row is not None:
        session.delete(row)


def get_user(session: Session, user_id: int | None) -> User | None:
    return session.get(User, user_id) if user_id is not None else None


def user_by_email(session: Session, email: str) -> User | None:
    """The account of *email*, however it was typed (addresses are kept lower-case)."""
    return session.scalar(select(User).where(User.email == email.strip().lower()))


def organization_of(session: Session, who: Principal) -> Organization | None:
    return session.get(Organization, who.organization_id) if who.organization_id else None
