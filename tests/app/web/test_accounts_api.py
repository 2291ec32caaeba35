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


def _checked(client, database, settings, archive, mode="provisional"):  # type: ignore[no-untyped-def]
    queue = client.app.state.queue
    body = client.post(
        "/api/v1/submissions",
        files={"file": ("g.tar.gz", archive.read_bytes())},
        data={"publication_mode": mode},
    ).json()
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
    return body["id"]


def test_chair_decisions_the_queue_and_the_timeline(env, database, settings, good_archive) -> None:  # type: ignore[no-untyped-def]
    client, tokens = env
    sid = _checked(client, database, settings, good_archive)
    chair = {"Authorization": f"Bearer {tokens['chair']}"}
    submitter = {"Authorization": f"Bearer {tokens['submitter']}"}
    assert client.get("/api/v1/review/queue", headers=submitter).status_code == 403
    queue = client.get("/api/v1/review/queue", headers=chair).json()["data"]
    assert [s["id"] for s in queue] == [sid]
    url = f"/api/v1/submissions/{sid}/decisions"
    assert client.post(url, json={"action": "finalize"}, headers=submitter).status_code == 403
    no_reason = client.post(url, json={"action": "reject"}, headers=chair)
    assert no_reason.status_code == 422 and no_reason.json()["error"]["code"] == "reason-required"
    assert client.post(url, json={"action": "ascend"}, headers=chair).status_code == 422
    done = client.post(url, json={"action": "finalize", "reason": "no objections"}, headers=chair)
    assert done.status_code == 200 and done.json()["state"] == "finalized"
    assert done.json()["result_status"] == "verified"
    again = client.post(url, json={"action": "finalize"}, headers=chair)
    assert again.status_code == 409 and again.json()["error"]["code"] == "not-allowed"
    assert client.get("/api/v1/review/queue", headers=chair).json()["data"] == []
    events = client.get(f"/api/v1/submissions/{sid}/timeline").json()["data"]
    assert [e["action"] for e in events] == [
        "uploaded",
        "checks started",
        "automated checks",
        "finalize",
    ]
    assert events[-1]["actor"] == "chair@mlc.org" and events[-1]["reason"] == "no objections"
    assert (events[2]["from"], events[2]["to"]) == ("checking", "passed_checks")


def test_withdrawn_results_leave_the_curves_and_keep_their_archive_entry(
    env,
    database,
    settings,
    good_archive,  # type: ignore[no-untyped-def]
) -> None:
    client, tokens = env
    chair = {"Authorization": f"Bearer {tokens['chair']}"}
    sid = _checked(client, database, settings, good_archive)
    cohort = client.get(f"/api/v1/submissions/{sid}").json()["eligible_cohort"]
    client.post(f"/api/v1/cohorts/{cohort}/publish", headers=chair)
    curves = client.get("/api/v1/results", params={"cohort": cohort}).json()["curves"]
    assert [c["submission"] for c in curves] == [sid]
    withdrawn = client.post(
        f"/api/v1/submissions/{sid}/decisions",
        headers=chair,
        json={"action": "withdraw", "reason": "submitter request"},
    )
    assert withdrawn.status_code == 200 and withdrawn.json()["state"] == "withdrawn"
    assert client.get("/api/v1/results", params={"cohort": cohort}).json()["curves"] == []
    archive = client.get(f"/api/v1/cohorts/{cohort}").json()["data"]
    assert [p["status"] for p in archive] == ["provisional", "withdrawn"]
