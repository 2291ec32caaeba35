"""Signing in, tokens on the API, the chair's publishing endpoint and decisions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient

from app.core.cohorts import Cohort
from app.db.session import Database
from app.main import create_app
from app.pipeline import run_checks
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, PASSWORD, bearer, create_accounts, form_token
from tests.support.fakes import RecordingQueue, SetClock, state_of

CHAIR_EMAIL = ACCOUNTS["chair"][0]


@pytest.fixture
def env(settings: Settings, database: Database) -> Iterator[tuple[TestClient, dict[str, str]]]:
    tokens = create_accounts(database)
    with TestClient(create_app(settings, queue=RecordingQueue(), clock=CLOCK_START())) as client:
        yield client, tokens


def CLOCK_START() -> SetClock:  # noqa: N802
    return SetClock(dt.datetime(2026, 11, 30, 10, tzinfo=ZoneInfo("America/Los_Angeles")))


def _checked(
    client: TestClient,
    database: Database,
    settings: Settings,
    archive: Path,
    tokens: dict[str, str],
    mode: str = "provisional",
    who: str = "submitter",
) -> str:
    queue = state_of(client).queue
    response = client.post(
        "/api/v1/submissions",
        files={"file": ("g.tar.gz", archive.read_bytes())},
        data={"publication_mode": mode},
        headers=bearer(tokens[who]),
    )
    assert response.status_code == 201, response.text
    with database.session() as session:
        run_checks(
            session=session,
            settings=settings,
            job_id=queue.sent[-1][0],
            clock=state_of(client).clock,
        )
    return str(response.json()["id"])


def test_uploads_need_a_submit_token_for_the_bundles_organisation(env, good_archive) -> None:  # type: ignore[no-untyped-def]
    client, tokens = env
    files = {"file": ("g.tar.gz", good_archive.read_bytes())}
    assert client.post("/api/v1/submissions", files=files).status_code == 401
    # The bundle names Acme Corp; a Borealis submitter cannot submit it.
    rival = client.post("/api/v1/submissions", files=files, headers=bearer(tokens["rival"]))
    assert rival.status_code == 422 and rival.json()["error"]["code"] == "organisation-mismatch"
    mine = client.post("/api/v1/submissions", files=files, headers=bearer(tokens["submitter"]))
    assert mine.status_code == 201 and mine.json()["organization"] == "Acme Corp"


def test_publishing_needs_the_chairs_token(env, database, settings, good_archive) -> None:  # type: ignore[no-untyped-def]
    client, tokens = env
    sid = _checked(client, database, settings, good_archive, tokens)
    cohort = client.get(f"/api/v1/submissions/{sid}", headers=bearer(tokens["chair"])).json()[
        "eligible_cohort"
    ]
    url = f"/api/v1/cohorts/{cohort}/publish"
    assert client.post(url).status_code == 401
    assert client.post(url, headers=bearer("epp_nonsense")).status_code == 401
    denied = client.post(url, headers=bearer(tokens["submitter"]))
    assert denied.status_code == 403 and "publish" in denied.text
    assert client.get(f"/api/v1/cohorts/{cohort}").status_code == 404  # nothing public yet
    chair = bearer(tokens["chair"])
    early = client.post(url, headers=chair)  # before Wednesday 08:00 Pacific
    assert early.status_code == 409 and early.json()["error"]["code"] == "too-early"
    client.app.state.clock.to_publication_of(cohort)
    published = client.post(url, headers=chair)
    assert published.status_code == 200, published.text
    assert [p["status"] for p in published.json()["data"]] == ["provisional"]
    assert client.post(url, headers=chair).json()["data"] == []  # idempotent
    public = client.get(f"/api/v1/cohorts/{cohort}").json()["data"]
    assert public[0]["submission"] == sid and public[0]["curves"][0]["points"] == 8
    assert public[0]["curves"][0]["result_id"].startswith("1.0.")
    # Provisional and published: the public sees the results, not the review (§11.9).
    seen = client.get(f"/api/v1/submissions/{sid}")
    assert seen.status_code == 200 and "review" not in seen.json() and seen.json()["curves"]
    assert client.get(f"/api/v1/submissions/{sid}/findings").status_code == 403
    page = client.get(f"/submissions/{sid}")
    assert page.status_code == 200 and "peer review pending" in page.text
    assert "preliminary and subject to change" in page.text and 'id="findings"' not in page.text
    assert client.post("/api/v1/cohorts/2026-13-C0/publish", headers=chair).status_code == 422


def test_sign_in_and_out_in_the_browser_flow(env) -> None:  # type: ignore[no-untyped-def]
    client, _tokens = env
    page = client.get("/login?next=//evil.example/")
    assert 'value="/"' in page.text  # never a redirect off the site
    token = form_token(client)
    wrong = client.post(
        "/login", data={"email": CHAIR_EMAIL, "password": "nope", "csrf_token": token}
    )
    assert wrong.status_code == 401 and "Wrong e-mail or password" in wrong.text
    ok = client.post(
        "/login",
        data={"email": CHAIR_EMAIL, "password": PASSWORD, "csrf_token": token, "next": "/review"},
        follow_redirects=False,
    )
    assert ok.status_code == 303 and "epp_session" in ok.headers["set-cookie"]
    assert ok.headers["location"] == "/review"
    assert "httponly" in ok.headers["set-cookie"].lower()
    home = client.get("/")
    assert CHAIR_EMAIL in home.text and "Sign out" in home.text
    # The token changed at sign-in: the one from before no longer signs out.
    assert client.post("/logout", data={"csrf_token": token}).status_code == 403
    client.post("/logout", data={"csrf_token": form_token(client, "/")})
    assert "Sign in" in client.get("/").text and page.status_code == 200
    assert client.get("/upload", follow_redirects=False).headers["location"].startswith("/login")


def test_anonymous_visitors_see_nothing_under_confidential_review(  # type: ignore[no-untyped-def]
    env, database, settings, good_archive, rival_archive
) -> None:
    client, tokens = env
    sid = _checked(client, database, settings, good_archive, tokens, mode="confidential")
    assert client.get("/api/v1/submissions").json()["count"] == 0
    assert "Acme Corp" not in client.get("/submissions").text
    for path in ("", "/findings", "/timeline", "/objections", "/reproductions"):
        assert client.get(f"/api/v1/submissions/{sid}{path}").status_code == 404, path
    assert client.get(f"/submissions/{sid}").status_code == 404
    # A chair token limited to publishing is not a member: it sees what the public sees.
    with database.session() as session:
        from sqlalchemy import select

        from app.accounts.services.accounts import issue_token
        from app.db.models import User

        chair = session.scalar(select(User).where(User.email == CHAIR_EMAIL))
        narrow = issue_token(session=session, user=chair, name="ci", scopes=["publish"])[1]
        session.commit()
    assert client.get(f"/api/v1/submissions/{sid}", headers=bearer(narrow)).status_code == 404
    # Rules §11.9: the submitting organisations see results, code and artifacts in review;
    # a member of an organisation that never submitted sees what the public sees.
    rival = bearer(tokens["rival"])
    assert client.get(f"/api/v1/submissions/{sid}/findings", headers=rival).status_code == 404
    assert client.get("/api/v1/submissions", headers=rival).json()["count"] == 0
    _checked(client, database, settings, rival_archive, tokens, mode="confidential", who="rival")
    assert client.get(f"/api/v1/submissions/{sid}/findings", headers=rival).status_code == 200
    listed = client.get("/api/v1/submissions", headers=rival).json()
    assert sid in [s["id"] for s in listed["data"]]
    # Not the review itself: its threads and timeline stay with the committee and the owner.
    assert client.get(f"/api/v1/submissions/{sid}/timeline", headers=rival).status_code == 403


def test_chair_decisions_the_queue_and_the_timeline(env, database, settings, good_archive) -> None:  # type: ignore[no-untyped-def]
    client, tokens = env
    sid = _checked(client, database, settings, good_archive, tokens, mode="confidential")
    chair = bearer(tokens["chair"])
    submitter = bearer(tokens["submitter"])
    assert client.get("/api/v1/review/queue", headers=submitter).status_code == 403
    queue = client.get("/api/v1/review/queue", headers=chair).json()["data"]
    assert [s["id"] for s in queue] == [sid]
    assert queue[0]["review"]["phase"] == "peer_review"
    assert queue[0]["review"]["reviewer"] in (ACCOUNTS["reviewer"][0], ACCOUNTS["reviewer2"][0])
    url = f"/api/v1/submissions/{sid}/decisions"
    assert client.post(url, json={"action": "finalize"}, headers=submitter).status_code == 403
    no_reason = client.post(url, json={"action": "reject"}, headers=chair)
    assert no_reason.status_code == 422 and no_reason.json()["error"]["code"] == "reason-required"
    assert client.post(url, json={"action": "ascend"}, headers=chair).status_code == 422
    # The assigned review is not complete: finalizing is refused and says what to do.
    early = client.post(url, json={"action": "finalize"}, headers=chair)
    assert early.status_code == 409 and early.json()["error"]["code"] == "review-incomplete"
    assert "has not completed the assigned review" in early.json()["error"]["message"]
    assigned = queue[0]["review"]["reviewer"]
    reviewer = bearer(tokens["reviewer" if assigned == ACCOUNTS["reviewer"][0] else "reviewer2"])
    completed = client.post(
        f"/api/v1/submissions/{sid}/review-complete", json={"notes": "read it all"},
        headers=reviewer,
    )  # fmt: skip
    assert completed.status_code == 200, completed.text
    done = client.post(url, json={"action": "finalize", "reason": "no objections"}, headers=chair)
    assert done.status_code == 200 and done.json()["state"] == "finalized"
    assert done.json()["result_status"] == "verified"
    again = client.post(url, json={"action": "finalize"}, headers=chair)
    assert again.status_code == 409 and again.json()["error"]["code"] == "not-allowed"
    assert client.get("/api/v1/review/queue", headers=chair).json()["data"] == []
    events = client.get(f"/api/v1/submissions/{sid}/timeline", headers=chair).json()["data"]
    actions = [e["action"] for e in events]
    # The upload is stamped by the wall clock, the rest by the app's set clock.
    assert "uploaded" in actions
    assert [a for a in actions if a != "uploaded"] == [
        "checks started",
        "automated checks",
        "review started",
        "reviewer assigned",
        "review completed",
        "finalize",
        "publication scheduled",
    ]
    finalized = next(e for e in events if e["action"] == "finalize")
    assert finalized["actor"] == CHAIR_EMAIL and finalized["reason"] == "no objections"
    checked = next(e for e in events if e["action"] == "automated checks")
    assert (checked["from"], checked["to"]) == ("checking", "passed_checks")
    # The portal's own steps read as the portal's, people's as their address.
    assert (checked["actor"], checked["actor_label"]) == ("system", "the portal")
    assert finalized["actor_label"] == CHAIR_EMAIL


def test_withdrawal_after_finalization_keeps_the_archive_entry_before_it_leaves_none(  # type: ignore[no-untyped-def]
    env, database, settings, good_archive, tmp_path
) -> None:
    from app.demo.bundles import BundleFactory, SystemSpec

    client, tokens = env
    chair = bearer(tokens["chair"])
    early = _checked(client, database, settings, good_archive, tokens)  # provisional
    cohort = client.get(f"/api/v1/submissions/{early}", headers=chair).json()["eligible_cohort"]
    client.app.state.clock.to_publication_of(cohort)
    client.post(f"/api/v1/cohorts/{cohort}/publish", headers=chair)
    assert [
        c["submission"]
        for c in client.get("/api/v1/results", params={"cohort": cohort}).json()["curves"]
    ] == [early]
    withdrawn = client.post(
        f"/api/v1/submissions/{early}/decisions",
        headers=chair,
        json={"action": "withdraw", "reason": "submitter request"},
    )
    assert withdrawn.status_code == 200 and withdrawn.json()["state"] == "withdrawn"
    # Withdrawn before finalization: no public record at all (rules §11.7).
    assert client.get("/api/v1/results", params={"cohort": cohort}).json()["curves"] == []
    assert client.get(f"/api/v1/cohorts/{cohort}").json()["data"] == []  # released, empty
    assert client.get(f"/api/v1/submissions/{early}").status_code == 404

    faster = SystemSpec(name="Acme H200 x16", saturation_tps=80_000)  # not a duplicate
    other = BundleFactory(system=faster, submission_id="sub-late").archive(tmp_path / "l.tar.gz")
    late = _checked(client, database, settings, other, tokens, mode="confidential")
    decisions = f"/api/v1/submissions/{late}/decisions"
    # No review here: the chair overrides, saying why; the override is on the timeline.
    unsaid = client.post(decisions, headers=chair, json={"action": "finalize", "override": True})
    assert unsaid.status_code == 422 and unsaid.json()["error"]["code"] == "reason-required"
    finalized = client.post(decisions, headers=chair, json={
        "action": "finalize", "override": True, "reason": "the reviewer left the committee",
    })  # fmt: skip
    assert finalized.status_code == 200, finalized.text
    timeline = client.get(f"/api/v1/submissions/{late}/timeline", headers=chair).json()["data"]
    [line] = [e for e in timeline if e["action"] == "finalized without review"]
    assert line["actor"] == CHAIR_EMAIL and line["reason"].startswith(
        "the reviewer left the committee ("
    )
    inbox = client.get("/api/v1/inbox", headers=chair).json()["data"]
    assert any(n["subject"].startswith("Finalized without a completed review") for n in inbox)
    due = client.get(f"/api/v1/submissions/{late}", headers=chair).json()["review"]["due_cohort"]
    client.app.state.clock.to_publication_of(due)
    out = client.post(f"/api/v1/cohorts/{due}/publish", headers=chair)
    assert out.status_code == 200 and out.json()["data"], (due, out.text)
    published = client.get(f"/api/v1/cohorts/{due}").json()["data"]
    result_id = published[0]["curves"][0]["result_id"]
    client.post(decisions, headers=chair, json={"action": "invalidate", "reason": "wrong power"})
    # Off every curve at once, the cohort it was published in included (the record never
    # contradicts a decision); that cohort's list of versions still names what it
    # published, and the archive entry, tagged with the reason, joins the next cohort.
    assert client.get("/api/v1/results").json()["curves"] == []
    assert client.get("/api/v1/results", params={"cohort": due}).json()["curves"] == []
    assert [p["status"] for p in client.get(f"/api/v1/cohorts/{due}").json()["data"]] == [
        "verified"
    ]
    published_in = Cohort.parse(due)
    assert published_in is not None
    following = str(published_in.next())
    client.app.state.clock.to_publication_of(following)
    client.post(f"/api/v1/cohorts/{following}/publish", headers=chair)
    archive = client.get(f"/api/v1/cohorts/{following}").json()["data"]
    assert [(p["status"], p["description"]) for p in archive] == [("invalidated", "wrong power")]
    assert archive[0]["curves"][0]["result_id"] == result_id  # the id stays with its tag
