"""The test accounts: two submitting organisations, a committee of two, the chair."""

from __future__ import annotations

from functools import cache
from typing import Any

from app.db.session import Database

PASSWORD = "correct horse battery"
# Two submitting organisations, a committee from two others, and the chair (rules §4.4).
ACCOUNTS: dict[str, tuple[str, str, str | None]] = {
    "submitter": ("sub@acme.example", "submitter", "Acme Corp"),
    "rival": ("sub@borealis.example", "submitter", "Borealis AI"),
    "reviewer": ("rev@cumulus.example", "reviewer", "Cumulus Cloud"),
    "reviewer2": ("rev@dune.example", "reviewer", "Dune Systems"),
    "chair": ("chair@mlcommons.example", "chair", None),
}


@cache
def _password_hash() -> str:
    """PASSWORD's hash, made once per test process: scrypt costs a tenth of a second
    by design, five users a test, hundreds of tests (the accounts' own tests hash each)."""
    from app.accounts.services.security import hash_password

    return hash_password(PASSWORD)


def create_accounts(database: Database) -> dict[str, str]:
    """The ACCOUNTS users, each with a full-scope API token; returns the tokens by key."""
    from sqlalchemy import select

    from app.accounts.services.accounts import issue_token, organisation_for
    from app.core.authorization import Role
    from app.db.models import User

    tokens = {}
    with database.session() as session:
        for key, (email, role, org) in ACCOUNTS.items():
            user = session.scalar(select(User).where(User.email == email))  # a restart
            if user is None:
                organization = organisation_for(session, org) if org is not None else None
                user = User(
                    email=email,
                    display_name=email.split("@")[0],
                    role=role,
                    password_hash=_password_hash(),
                    organization=organization,
                )
                session.add(user)
                session.flush()
            tokens[key] = issue_token(session=session, user=user, name="tests")[1]
            if role == Role.REVIEWER and user.organization is not None:
                # The chair's appointees (rules §4.4): no finalized results needed.
                user.organization.committee_appointed = True
        session.commit()
    return tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def form_token(client: Any, path: str = "/login") -> str:
    """The CSRF token a page's forms carry (bound to the browser, and to its session once
    signed in), read from the page as a browser has it."""
    import re

    page = client.get(path)
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found, f"no form token on {path}"
    return found.group(1)


def create_neutral_members(database: Database, count: int = 2) -> dict[str, str]:
    """*count* neutral members (rules §4.4: no organisation), each with a full-scope token;
    returns the tokens by key ("neutral1", ...)."""
    from app.accounts.services.accounts import create_user, issue_token
    from app.core.authorization import Role

    tokens = {}
    with database.session() as session:
        for n in range(1, count + 1):
            user = create_user(session=session, email=f"neutral{n}@mlcommons.example",
                               password=PASSWORD, role=Role.NEUTRAL)  # fmt: skip
            tokens[f"neutral{n}"] = issue_token(session=session, user=user, name="tests")[1]
        session.commit()
    return tokens
