"""CSRF wherever a cookie authenticates: the forms' token is bound to the session and
renewed at sign-in; the API takes a session cookie on a state-changing call only with
the token in X-CSRF-Token; over https the cookies are __Host- prefixed and Secure."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db.models import Notification, Publication
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, PASSWORD, create_accounts, form_token
from tests.support.fakes import RecordingQueue


@pytest.fixture
def app_(settings: Settings, database: Database) -> Iterator[object]:
    create_accounts(database)
    yield create_app(settings, queue=RecordingQueue())


def _sign_in(client: TestClient, key: str = "chair") -> None:
    signed = client.post(
        "/login",
        data={"email": ACCOUNTS[key][0], "password": PASSWORD, "csrf_token": form_token(client)},
        follow_redirects=False,
    )
    assert signed.status_code == 303, signed.text


def test_the_api_takes_a_session_cookie_only_with_the_pages_token(app_, database) -> None:  # type: ignore[no-untyped-def]
    with TestClient(app_) as browser:
        _sign_in(browser)
        forged = browser.post("/api/v1/cohorts/2026-12-C0/publish")
        assert forged.status_code == 403 and "X-CSRF-Token" in forged.json()["error"]["message"]
        wrong = browser.post("/api/v1/inbox/read", headers={"X-CSRF-Token": "guess"})
        assert wrong.status_code == 403
        with database.session() as session:
            assert session.scalar(select(func.count()).select_from(Publication)) == 0
        with_token = {"X-CSRF-Token": form_token(browser)}
        assert browser.post("/api/v1/inbox/read", headers=with_token).status_code == 204
        # Reading needs no token; a script's bearer token needs none either.
        assert browser.get("/api/v1/inbox").status_code == 200


def test_the_token_is_renewed_at_sign_in_and_bound_to_the_session(app_, database) -> None:  # type: ignore[no-untyped-def]
    with TestClient(app_) as victim, TestClient(app_) as attacker:
        before = form_token(victim)
        _sign_in(victim)
        after = form_token(victim)
        assert after != before
        # A token from before the sign-in no longer acts.
        assert victim.post("/inbox/read", data={"csrf_token": before}).status_code == 403
        # A cookie planted from a sibling origin: the attacker's own browser id, whose
        # token the attacker knows. The victim's forms are bound to the victim's session.
        attacker_token = form_token(attacker)
        victim.cookies.set("epp_browser", attacker.cookies["epp_browser"])
        with database.session() as session:
            unread = session.scalar(select(func.count()).select_from(Notification))
        forged = victim.post("/inbox/read", data={"csrf_token": attacker_token})
        assert forged.status_code == 403
        assert victim.post("/inbox/read", data={"csrf_token": after}).status_code in (200, 303)
        with database.session() as session:
            assert session.scalar(select(func.count()).select_from(Notification)) == unread


def test_over_https_the_cookies_are_host_prefixed_secure_and_httponly(app_) -> None:  # type: ignore[no-untyped-def]
    with TestClient(app_, base_url="https://portal.example") as client:
        page = client.get("/login")
        browser = page.headers["set-cookie"]
        assert browser.startswith("__Host-epp_browser=")
        for attribute in ("secure", "httponly", "samesite=lax", "path=/"):
            assert attribute in browser.lower(), attribute
        assert "domain=" not in browser.lower()
        assert "max-age=31536000" in page.headers["strict-transport-security"]
        signed = client.post(
            "/login",
            data={
                "email": ACCOUNTS["chair"][0],
                "password": PASSWORD,
                "csrf_token": form_token(client),
            },  # fmt: skip
            follow_redirects=False,
        )
        cookies = signed.headers.get_list("set-cookie")
        session = next(c for c in cookies if c.startswith("__Host-epp_session="))
        assert "secure" in session.lower() and "httponly" in session.lower()
        assert "Sign out" in client.get("/").text  # the prefixed cookie signs in
