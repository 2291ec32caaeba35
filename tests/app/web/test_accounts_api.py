"""Signing in, tokens on the API, and the chair's publishing endpoint."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.domain.accounts import Role
from app.services.accounts import create_user, issue_token
from app.services.checks import run_checks
from app.settings import Settings
from app.web.main import create_app
from tests.conftest import RecordingQueue

PASSWORD = "correct horse battery"


@pytest.fixture
def env(settings: Settings, database: Database) -> Iterator[tuple[TestClient, dict[str, str]]]:
    with database.session() as session:
        tokens = {}
        for email, role in (("sub@acme.org", Role.SUBMITTER), ("chair@mlc.org", Role.CHAIR)):
            user = create_user(session=session, email=email, password=PASSWORD, role=role)
            tokens[role.value] = issue_token(session=session, user=user, name="t")[1]
        session.commit()
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        yield client, tokens


def test_publishing_needs_the_chairs_token(env, database, settings, good_archive) -> None:  # type: ignore[no-untyped-def]
    client, tokens = env
    queue = client.app.state.queue
    body = client.post(
        "/api/v1/submissions",
        files={"file": ("g.tar.gz", good_archive.read_bytes())},
        data={"publication_mode": "provisional"},
    ).json()
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
    cohort = client.get(f"/api/v1/submissions/{body['id']}").json()["eligible_cohort"]
    url = f"/api/v1/cohorts/{cohort}/publish"
    assert client.post(url).status_code == 401
    assert client.post(url, headers={"Authorization": "Bearer epp_nonsense"}).status_code == 401
    denied = client.post(url, headers={"Authorization": f"Bearer {tokens['submitter']}"})
    assert denied.status_code == 403 and "publish" in denied.text
    assert client.get(f"/api/v1/cohorts/{cohort}").status_code == 404  # nothing public yet
    chair = {"Authorization": f"Bearer {tokens['chair']}"}
    published = client.post(url, headers=chair)
    assert published.status_code == 200, published.text
    assert [p["status"] for p in published.json()["data"]] == ["provisional"]
    assert client.post(url, headers=chair).json()["data"] == []  # idempotent
    public = client.get(f"/api/v1/cohorts/{cohort}").json()["data"]
    assert public[0]["submission"] == body["id"] and public[0]["curves"][0]["points"] == 8
    assert client.post("/api/v1/cohorts/2026-13-C0/publish", headers=chair).status_code == 422


def test_sign_in_and_out_in_the_browser_flow(env) -> None:  # type: ignore[no-untyped-def]
    client, _tokens = env
    page = client.get("/login")
    token = client.cookies.get("epp_csrf")
    wrong = client.post(
        "/login", data={"email": "chair@mlc.org", "password": "nope", "csrf_token": token}
    )
    assert wrong.status_code == 401 and "Wrong e-mail or password" in wrong.text
    ok = client.post(
        "/login",
        data={"email": "chair@mlc.org", "password": PASSWORD, "csrf_token": token},
        follow_redirects=False,
    )
    assert ok.status_code == 303 and "epp_session" in ok.headers["set-cookie"]
    assert "httponly" in ok.headers["set-cookie"].lower()
    home = client.get("/")
    assert "chair@mlc.org" in home.text and "Sign out" in home.text
    client.post("/logout", data={"csrf_token": token})
    assert "Sign in" in client.get("/").text and page.status_code == 200


def test_anonymous_listings_show_only_published_submissions(env, good_archive) -> None:  # type: ignore[no-untyped-def]
    client, tokens = env
    body = client.post(
        "/api/v1/submissions", files={"file": ("g.tar.gz", good_archive.read_bytes())}
    ).json()
    assert client.get("/api/v1/submissions").json()["count"] == 0  # under review: not public
    assert body["organization"] not in client.get("/").text
    signed_in = {"Authorization": f"Bearer {tokens['submitter']}"}
    listed = client.get("/api/v1/submissions", headers=signed_in).json()
    assert [s["id"] for s in listed["data"]] == [body["id"]]
    # The uploader follows its submission by its unguessable id.
    assert client.get(f"/api/v1/submissions/{body['id']}").status_code == 200
