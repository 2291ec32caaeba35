"""Accounts a newcomer can get, through the pages: the chair invites, the newcomer
follows the one-time link, sets a password and is signed in; a request from the sign-in
page reaches the chair's inbox."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, PASSWORD, create_accounts, form_token
from tests.support.fakes import RecordingQueue

NEW_PASSWORD = "a long new password"


@pytest.fixture
def app_(settings: Settings, database: Database) -> Iterator[object]:
    create_accounts(database)
    yield create_app(settings, queue=RecordingQueue())


def _sign_in(client: TestClient, key: str) -> None:
    signed = client.post(
        "/login",
        data={"email": ACCOUNTS[key][0], "password": PASSWORD, "csrf_token": form_token(client)},
        follow_redirects=False,
    )
    assert signed.status_code == 303, signed.text


def _invite(chair: TestClient, **form: str):  # type: ignore[no-untyped-def]
    return chair.post("/invitations", data={"csrf_token": form_token(chair), **form})


def test_a_newcomer_joins_through_the_chairs_link_and_is_signed_in(app_) -> None:  # type: ignore[no-untyped-def]
    with TestClient(app_) as chair, TestClient(app_) as newcomer:
        # Signed out: the invitations page asks for a sign-in first.
        assert (
            chair.get("/invitations", follow_redirects=False)
            .headers["location"]
            .startswith("/login?next=%2Finvitations")
        )
        _sign_in(chair, "chair")
        page = _invite(
            chair, email="ada@fjord.example", role="submitter", organization="Fjord Labs"
        )
        assert page.status_code == 200, page.text
        link = re.search(r'<code id="invite-link">([^<]+)</code>', page.text)
        assert link is not None and "send them this link yourself" in page.text
        path = "/join/" + link.group(1).rsplit("/join/", 1)[1]
        assert 'data-email="ada@fjord.example"' in chair.get("/invitations").text
        form = newcomer.get(path)
        assert form.status_code == 200 and "Fjord Labs" in form.text
        mismatch = newcomer.post(path, data={"password": NEW_PASSWORD, "repeated": "different!!!!",
                                             "csrf_token": form_token(newcomer)})  # fmt: skip
        assert mismatch.status_code == 422 and "The two passwords differ" in mismatch.text
        joined = newcomer.post(
            path,
            data={
                "display_name": "Ada",
                "password": NEW_PASSWORD,
                "repeated": NEW_PASSWORD,
                "csrf_token": form_token(newcomer),
            },  # fmt: skip
            follow_redirects=False,
        )
        assert joined.status_code == 303 and joined.headers["location"] == "/upload?welcome=1"
        upload = newcomer.get("/upload")
        assert upload.status_code == 200 and "ada@fjord.example · submitter" in upload.text
        # The link is spent: a second use says so.
        again = newcomer.get(path)
        assert again.status_code == 409 and "used already" in again.text


def test_only_the_chair_or_an_administrator_invites_and_errors_keep_the_form(app_) -> None:  # type: ignore[no-untyped-def]
    with TestClient(app_) as reviewer, TestClient(app_) as chair:
        _sign_in(reviewer, "reviewer")
        assert reviewer.get("/invitations").status_code == 403
        refused = _invite(reviewer, email="x@y.example", role="submitter", organization="Y")
        assert refused.status_code == 403
        _sign_in(chair, "chair")
        page = chair.get("/invitations").text
        assert '<option value="submitter"' in page and '<option value="chair"' not in page
        chair_invite = _invite(chair, email="c2@mlcommons.example", role="chair")
        assert chair_invite.status_code == 403
        assert "only an administrator may invite someone as chair" in chair_invite.text.lower()
        bad = _invite(chair, email="not-an-address", role="submitter", organization="Fjord Labs")
        assert bad.status_code == 422 and 'value="Fjord Labs"' in bad.text
        assert "is not an e-mail address" in bad.text
        forged = chair.post("/invitations", data={"email": "x@y.example", "role": "submitter"})
        assert forged.status_code == 403  # no CSRF token


def test_a_request_from_the_sign_in_page_reaches_the_chairs_inbox(app_) -> None:  # type: ignore[no-untyped-def]
    with TestClient(app_) as stranger, TestClient(app_) as chair:
        login = stranger.get("/login").text
        assert 'href="/request-account"' in login and "by invitation" in login
        blank = stranger.post("/request-account", data={
            "email": "ops@glacier.example", "display_name": "", "organization": "Glacier Inc",
            "csrf_token": form_token(stranger)})  # fmt: skip
        assert blank.status_code == 422 and 'value="Glacier Inc"' in blank.text
        sent = stranger.post("/request-account", data={
            "email": "ops@glacier.example", "display_name": "Grace", "organization": "Glacier Inc",
            "message": "We submit in January.", "csrf_token": form_token(stranger)})  # fmt: skip
        assert sent.status_code == 200 and "the chair has your request" in sent.text
        _sign_in(chair, "chair")
        inbox = chair.get("/api/v1/inbox").json()["data"]
        assert inbox[0]["subject"] == "Account request: Grace (Glacier Inc)"
        assert inbox[0]["link"].startswith("/invitations#request-")
        page = chair.get("/invitations").text
        assert 'data-email="ops@glacier.example"' in page and "We submit in January." in page
        request_id = re.search(r'id="request-(\d+)"', page).group(1)  # type: ignore[union-attr]
        answered = _invite(chair, email="ops@glacier.example", role="submitter",
                           organization="Glacier Inc", request_id=request_id)  # fmt: skip
        assert answered.status_code == 200 and 'id="no-requests"' in answered.text


def test_a_request_naming_an_existing_organisation_is_never_joined_in_one_click(app_) -> None:  # type: ignore[no-untyped-def]
    """The one-click invitation of a request for "Acme Corp." asks the chair; joining
    Acme takes the chair's own click on "Joins the existing organisation Acme Corp"."""
    with TestClient(app_) as stranger, TestClient(app_) as chair:
        stranger.post("/request-account", data={
            "email": "eve@evil.example", "display_name": "Eve", "organization": "Acme Corp.",
            "csrf_token": form_token(stranger)})  # fmt: skip
        _sign_in(chair, "chair")
        page = chair.get("/invitations").text
        assert "like the existing Acme Corp" in page
        request_id = re.search(r'id="request-(\d+)"', page).group(1)  # type: ignore[union-attr]
        one_click = _invite(chair, email="eve@evil.example", role="submitter",
                            organization="Acme Corp.", request_id=request_id)  # fmt: skip
        assert one_click.status_code == 409
        assert 'data-code="organisation-exists"' in one_click.text
        assert 'id="invite-link"' not in one_click.text
        assert 'data-organization="Acme_Corp"' in one_click.text
        assert 'id="no-invitations"' in chair.get("/invitations").text  # none was made
        confirmed = _invite(chair, email="eve@evil.example", role="submitter",
                            organization="Acme Corp.", request_id=request_id,
                            join_organization="Acme_Corp")  # fmt: skip
        assert confirmed.status_code == 200 and 'id="invite-link"' in confirmed.text


def test_the_link_is_on_the_portals_public_address_whatever_the_host_header(app_) -> None:  # type: ignore[no-untyped-def]
    with TestClient(app_) as chair:
        _sign_in(chair, "chair")
        page = chair.post(
            "/invitations",
            data={"csrf_token": form_token(chair), "email": "bo@fjord.example",
                  "role": "submitter", "organization": "Fjord Labs"},
            headers={"Host": "evil.example"},
        )  # fmt: skip
        link = re.search(r'<code id="invite-link">([^<]+)</code>', page.text)
        assert link is not None
        assert link.group(1).startswith("http://127.0.0.1:8000/join/")
        assert "evil.example" not in page.text
