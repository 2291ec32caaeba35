"""Accounts, passwords, API tokens and sessions on a real database."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select, text

from app.accounts.services.accounts import (
    AccountError,
    authenticate,
    create_user,
    issue_token,
    principal_for_session,
    principal_for_token,
    revoke_token,
    start_session,
)
from app.accounts.services.security import hash_password, verify_password
from app.core.authorization import Role, Scope
from app.db.models import ApiToken, WebSession
from app.db.session import Database

# PostgreSQL too: e-mail uniqueness and case are the database's collation.
pytestmark = pytest.mark.postgresql

PASSWORD = "correct horse battery"


def test_passwords_are_salted_scrypt_hashes() -> None:
    first, second = hash_password(PASSWORD), hash_password(PASSWORD)
    assert first != second and first.startswith("scrypt$") and PASSWORD not in first
    assert verify_password(PASSWORD, first) and not verify_password("wrong", first)
    assert not verify_password(PASSWORD, None) and not verify_password(PASSWORD, "garbage")


def test_users_are_validated(database: Database) -> None:
    with database.session() as session:
        for email, password, code in (
            ("nope", PASSWORD, "bad-email"),
            ("a@b.org", "short", "weak-password"),
        ):
            with pytest.raises(AccountError) as error:
                create_user(session=session, email=email, password=password, role=Role.SUBMITTER)
            assert error.value.code == code
        create_user(
            session=session,
            email="A@B.org",
            password=PASSWORD,
            role=Role.SUBMITTER,
            organization="Acme Corp",
        )
        with pytest.raises(AccountError, match="exists"):
            create_user(session=session, email="a@b.org", password=PASSWORD, role=Role.CHAIR)
        session.commit()
        assert authenticate(session=session, email="a@b.org", password=PASSWORD) is not None
        assert authenticate(session=session, email="a@b.org", password="wrong!") is None
        assert authenticate(session=session, email="who@b.org", password=PASSWORD) is None


def test_tokens_are_shown_once_stored_hashed_scoped_and_revocable(database: Database) -> None:
    with database.session() as session:
        user = create_user(
            session=session, email="s@acme.org", password=PASSWORD, role=Role.SUBMITTER
        )
        token, plaintext = issue_token(session=session, user=user, name="ci")
        session.commit()
        stored = session.execute(text("select token_hash from api_tokens")).scalar_one()
        assert plaintext not in stored and len(stored) == 64
        who = principal_for_token(session, plaintext)
        assert who is not None and who.scopes == {Scope.SUBMIT} and who.email == "s@acme.org"
        assert session.scalar(select(ApiToken.last_used_at)) is not None
        with pytest.raises(AccountError, match="cannot hold"):
            issue_token(session=session, user=user, name="x", scopes=["publish"])
        revoke_token(session=session, token=token)
        session.commit()
        assert principal_for_token(session, plaintext) is None
        assert principal_for_token(session, "epp_made-up") is None


def test_sessions_expire(database: Database) -> None:
    with database.session() as session:
        user = create_user(session=session, email="c@mlc.org", password=PASSWORD, role=Role.CHAIR)
        cookie = start_session(session=session, user=user)
        session.commit()
        who = principal_for_session(session, cookie)
        assert who is not None and who.has(Scope.PUBLISH) and not who.has(Scope.ADMIN)
        row = session.scalars(select(WebSession)).one()
        assert cookie not in row.token_hash
        row.expires_at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
        session.commit()
        assert principal_for_session(session, cookie) is None
