"""Tables of the accounts feature: organisations, users, tokens, sessions, invitations, the
inbox."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    JSON,
    Boolean,
    ForeignKey,
    Index,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.authorization import Role
from app.db.models.base import Base, UTCDateTime, enum_of, utcnow


class Organization(Base):
    __tablename__ = "organizations"
    __table_args__ = (Index("ix_organizations_name_key", "name_key", unique=True),)

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    # The name's normalised form (app.core.names.organisation_key): one organisation per
    # form, so "Acme Corp." is never a second Acme Corp, nor silently the first. Always
    # written; NULL-able only so that SQLite could add it without copying the table.
    name_key: Mapped[str] = mapped_column(String(200), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Rules §4.4: an assigned review not finished by the end of Week 3 takes the
    # organisation off the committee until it has a newly finalized result.
    committee_suspended_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    # Appointed to the committee by the chair, whatever its results (rules §4.4).
    committee_appointed: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    # The submitter's primary jurisdiction: its public holidays do not count as business
    # days on the objection clocks (rules §11.3). ISO 3166-1 alpha-2, optional subdivision.
    country: Mapped[str | None] = mapped_column(String(2))
    subdivision: Mapped[str | None] = mapped_column(String(8))


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    organization_id: Mapped[int | None] = mapped_column(ForeignKey("organizations.id"))
    email: Mapped[str] = mapped_column(String(320), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    role: Mapped[Role] = mapped_column(enum_of(Role, 32), default=Role.SUBMITTER)
    password_hash: Mapped[str | None] = mapped_column(Text)
    is_active: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)

    organization: Mapped[Organization | None] = relationship()


class ApiToken(Base):
    """A scoped API token: shown once, stored as a hash, revocable."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    name: Mapped[str] = mapped_column(Text)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))  # to recognise a token in lists
    scopes: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    user: Mapped[User] = relationship()


class WebSession(Base):
    """A browser login; the cookie holds a secret whose hash is stored here."""

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())

    user: Mapped[User] = relationship()


class Invitation(Base):
    """A one-time, expiring link that lets a newcomer set a password and join with the
    role and organisation the inviter chose; only the link secret's hash is stored."""

    __tablename__ = "invitations"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320), index=True)
    role: Mapped[Role] = mapped_column(enum_of(Role, 32))
    # The organisation the invited person joins, chosen by the inviter: an existing one
    # (confirmed, never by default) or one made for the invitation; its name as shown.
    organization_id: Mapped[int | None] = mapped_column(ForeignKey("organizations.id"))
    organization: Mapped[str | None] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # None: the operator's command line.
    invited_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    accepted_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    request_id: Mapped[int | None] = mapped_column(ForeignKey("account_requests.id"))

    invited_by: Mapped[User | None] = relationship()


class AccountRequest(Base):
    """Someone without an account asking for one, from the sign-in page; it reaches the
    chairs' inbox, and an invitation answers it."""

    __tablename__ = "account_requests"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    display_name: Mapped[str] = mapped_column(String(200))
    organization: Mapped[str] = mapped_column(String(200))
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # When a chair answered it: invited (an Invitation names it) or declined.
    handled_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    outcome: Mapped[str | None] = mapped_column(String(16))


class Notification(Base):
    """An entry in a user's in-app inbox; e-mailed too when SMTP is configured."""

    __tablename__ = "notifications"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    subject: Mapped[str] = mapped_column(Text)
    body: Mapped[str] = mapped_column(Text)
    link: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    read_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    emailed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    user: Mapped[User] = relationship()


class SavedView(Base):
    """A view of the results a signed-in user named: its address's query, opened by its
    id by anyone the link is given to (issue 49)."""

    __tablename__ = "saved_views"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    query: Mapped[str] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
