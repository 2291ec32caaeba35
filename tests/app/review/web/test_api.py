"""The review API over ASGI: embargo changes, reviewer assignment, point states, the
bundle viewer's bounds, and the objection endpoints' refusals."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.models import Submission
from app.db.session import Database
from app.main import create_app
from app.pipeline import run_checks
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, bearer, create_accounts, create_neutral_members
from tests.support.fakes import RecordingQueue, SetClock
from tests.support.rows import must
from tests.support.submissions import archive_of, in_dispute, pt


@pytest.fixture
def env(
    settings: Settings, database: Database, good_archive: Path
) -> Iterator[tuple[TestClient, dict[str, dict[str, str]], str]]:
    tokens = create_accounts(database)
    queue = RecordingQueue()
    with TestClient(create_app(settings, queue=queue)) as client:
        response = client.post(
            "/api/v1/submissions",
            files={"file": ("g.tar.gz", good_archive.read_bytes())},
            headers=bearer(tokens["submitter"]),
        )
        assert response.status_code == 201, response.text
        with database.session() as session:
            run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
        yield client, {k: bearer(v) for k, v in tokens.items()}, response.json()["id"]


def test_embargo_is_the_submitters_to_change_and_the_committee_hears_of_it(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid = env
    url = f"/api/v1/submissions/{sid}/embargo"
    later = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    # A rival that never submitted does not even see it (rules §11.9).
    assert client.put(url, json={"embargo_date": later}, headers=who["rival"]).status_code == 404
    past = client.put(url, json={"embargo_date": "2020-01-01"}, headers=who["submitter"])
    assert past.status_code == 422 and past.json()["error"]["code"] == "bad-embargo"
    # Past what can hold a result (rules §4.2): refused with the rule, never cut short.
    far = client.put(url, json={"embargo_date": "2028-01-01"}, headers=who["submitter"])
    assert far.status_code == 422 and "§4.2" in far.json()["error"]["message"]
    ok = client.put(url, json={"embargo_date": later}, headers=who["submitter"])
    assert ok.status_code == 200 and ok.json()["embargo_date"] == later
    inbox = client.get("/api/v1/inbox", headers=who["reviewer"]).json()
    assert any(n["subject"].startswith("Embargo changed") for n in inbox["data"])
    assert inbox["unread"] >= 1
    assert client.post("/api/v1/inbox/read", headers=who["reviewer"]).status_code == 204
    assert client.get("/api/v1/inbox", headers=who["reviewer"]).json()["unread"] == 0


def test_the_chair_assigns_reviewers_but_never_from_the_submitters_organisation(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid = env
    url = f"/api/v1/submissions/{sid}/reviewer"
    assert client.post(url, json={}, headers=who["reviewer"]).status_code == 403
    chosen = client.post(url, json={"email": ACCOUNTS["reviewer2"][0]}, headers=who["chair"])
    assert chosen.status_code == 200 and chosen.json()["reviewer"] == ACCOUNTS["reviewer2"][0]
    own = client.post(url, json={"email": ACCOUNTS["submitter"][0]}, headers=who["chair"])
    assert own.status_code == 422 and own.json()["error"]["code"] == "not-eligible"


def test_the_submitter_withdraws_a_faulty_point_and_the_curve_must_still_be_complete(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid = env
    detail = client.get(f"/api/v1/submissions/{sid}", headers=who["chair"]).json()
    curve = detail["curves"][0]
    label = f"{curve['system_dir']}/{curve['benchmark_model']}/r64"
    url = f"/api/v1/submissions/{sid}/points/{label}/state"
    bad = client.post(url, json={"state": "invalidated", "reason": "x"}, headers=who["chair"])
    assert bad.status_code == 409  # invalidation is for finalized results
    rival = client.post(url, json={"state": "withdrawn", "reason": "x"}, headers=who["rival"])
    assert rival.status_code == 404  # a non-submitting organisation sees nothing of it
    # Rules §11.7: during review the submitter may withdraw a faulty point.
    done = client.post(
        url, json={"state": "withdrawn", "reason": "faulty run"}, headers=who["submitter"]
    )
    assert done.status_code == 200, done.text
    again = client.post(url, json={"state": "active", "reason": "back"}, headers=who["chair"])
    assert again.status_code == 409 and again.json()["error"]["code"] == "point-closed"
    # Without r64 the curve has 7 points and a dedicated Offline run: below the minimum
    # of 8, and its Medium region is empty (rules §5.2): it cannot be finalized.
    refused = client.post(
        f"/api/v1/submissions/{sid}/decisions", json={"action": "finalize"}, headers=who["chair"]
    )
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "curve-incomplete"
    assert "fewer than the minimum 8" in refused.json()["error"]["message"]
    # Confidential and in review: nothing of it exists for the public (rules §11.9).
    assert client.get(f"/api/v1/submissions/{sid}/timeline").status_code == 404
    timeline = client.get(f"/api/v1/submissions/{sid}/timeline", headers=who["chair"]).json()
    timeline = timeline["data"]
    assert any(e["action"] == "point state" and "faulty run" in e["reason"] for e in timeline)


def test_the_submitter_withdraws_its_submission(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid = env
    url = f"/api/v1/submissions/{sid}/withdraw"
    assert client.post(url, json={"reason": "x"}, headers=who["rival"]).status_code == 404
    missing = client.post(url, json={"reason": " "}, headers=who["submitter"])
    assert missing.status_code == 422 and missing.json()["error"]["code"] == "reason-required"
    done = client.post(url, json={"reason": "a fault in r64"}, headers=who["submitter"])
    assert done.status_code == 200 and done.json()["state"] == "withdrawn"
    twice = client.post(url, json={"reason": "again"}, headers=who["submitter"])
    assert twice.status_code == 409 and twice.json()["error"]["code"] == "closed"
    recheck = client.post(f"/api/v1/submissions/{sid}/checks", headers=who["submitter"])
    assert recheck.status_code == 409 and recheck.json()["error"]["code"] == "closed"


def test_objection_endpoints_refuse_with_reasons(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid = env
    url = f"/api/v1/submissions/{sid}/objections"
    body = {"type": "compliance", "title": "t", "rule_cited": "R §6", "evidence": "log"}
    assert client.post(url, json=body, headers=who["submitter"]).status_code == 403
    bad_type = client.post(url, json={**body, "type": "vibes"}, headers=who["reviewer"])
    assert bad_type.status_code == 422 and bad_type.json()["error"]["code"] == "bad-type"
    no_point = client.post(url, json={**body, "point": "nope/x/r1"}, headers=who["reviewer"])
    assert no_point.status_code == 422 and no_point.json()["error"]["code"] == "unknown-point"
    filed = client.post(url, json=body, headers=who["reviewer"])
    assert filed.status_code == 201 and filed.json()["submitter_due_at"]
    actions = f"/api/v1/objections/{filed.json()['id']}/actions"
    silent = client.post(actions, json={"action": "contest"}, headers=who["submitter"])
    assert silent.status_code == 422 and silent.json()["error"]["code"] == "body-required"
    early = client.post(actions, json={"action": "accept"}, headers=who["reviewer"])
    assert early.status_code == 409  # nothing to accept before the submitter answers
    assert client.get(f"/api/v1/objections/{filed.json()['id']}").status_code == 404  # public
    types = client.get("/api/v1/objection-types").json()
    assert {t["id"] for t in types["types"]} >= {"compliance", "cosmetic", "availability"}


def test_the_bundle_viewer_stays_inside_the_bundle(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid = env
    page = f"/submissions/{sid}/files"
    assert client.get(page).status_code == 404  # confidential: not for the public
    listing = client.get(page, headers=who["reviewer"])
    assert listing.status_code == 200 and "system_desc.json" in listing.text
    for evil in ("../../portal.sqlite3", "/etc/passwd", "../../../../etc/passwd"):
        assert client.get(page, params={"path": evil}, headers=who["reviewer"]).status_code == 404


EVERY_FIELD = {  # whatever a form asks for, so that only the token is missing
    "reason": "r", "action": "finalize", "point": "x", "endpoint_url": "http://127.0.0.1:9",
    "state": "withdrawn", "cohort": "2026-12-C0", "email": "x@y.z", "password": "p",
    "type": "compliance", "title": "t", "rule_cited": "r", "evidence": "e", "body": "b",
}  # fmt: skip


def test_every_form_refuses_a_post_without_its_csrf_token(env) -> None:  # type: ignore[no-untyped-def]
    """All the browser's POST routes, found from the app itself: none acts without the
    form's token, whoever is signed in."""
    from fastapi.routing import APIRoute

    from app.main import FEATURES

    client, who, sid = env
    routes = [
        r
        for feature in FEATURES
        if feature.__name__.endswith(".pages")
        for r in feature.router.routes
        if isinstance(r, APIRoute) and "POST" in (r.methods or set())
    ]
    assert len(routes) >= 12
    for route in routes:
        path = (
            route.path.replace("{public_id}", sid)
            .replace("{objection_id}", "x")
            .replace("{rid}", "x")
        )
        # The upload form's token travels in its multipart body, beside the file.
        files = {"file": ("g.tar.gz", b"x")} if path == "/upload" else None
        response = client.post(path, data=EVERY_FIELD,
                               files=files, headers=who["chair"])  # fmt: skip
        assert response.status_code == 403, (route.path, response.status_code)
        assert "security token" in response.text, route.path


def test_only_the_assigned_reviewer_completes_the_review_and_once(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid = env
    assigned = client.get(f"/api/v1/submissions/{sid}", headers=who["chair"]).json()["review"]
    key = next(k for k in ("reviewer", "reviewer2") if ACCOUNTS[k][0] == assigned["reviewer"])
    other = "reviewer2" if key == "reviewer" else "reviewer"
    url = f"/api/v1/submissions/{sid}/review-complete"
    refused = client.post(url, json={"notes": "x"}, headers=who[other])
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "not-yours"
    done = client.post(url, json={"notes": "Logs match the summaries."}, headers=who[key])
    assert done.status_code == 200 and done.json()["review_completed_at"]
    assert client.post(url, json={}, headers=who[key]).status_code == 409
    timeline = client.get(f"/api/v1/submissions/{sid}/timeline", headers=who["chair"]).json()
    assert any(e["action"] == "review completed" for e in timeline["data"])


def test_the_chair_reclassifies_a_result_in_review(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid = env
    url = f"/api/v1/submissions/{sid}/decisions"
    body = {"action": "reclassify", "availability": "RDI", "reason": "not orderable"}
    assert client.post(url, json=body, headers=who["reviewer"]).status_code == 403
    unknown = client.post(url, json={**body, "availability": "GA"}, headers=who["chair"])
    assert unknown.status_code == 422 and "availability" in unknown.text
    undated = client.post(url, json={**body, "availability": "Preview"}, headers=who["chair"])
    assert undated.status_code == 422
    assert undated.json()["error"]["code"] == "bad-reclassification"
    assert "names the date it will be Available" in undated.json()["error"]["message"]
    done = client.post(url, json=body, headers=who["chair"])
    assert done.status_code == 200, done.text
    detail = client.get(f"/api/v1/submissions/{sid}", headers=who["submitter"]).json()
    assert {s["availability"] for s in detail["standing"]} == {"RDI"}
    assert all(s["result_name"] == "MLPerf Endpoints" for s in detail["standing"])
    timeline = client.get(f"/api/v1/submissions/{sid}/timeline", headers=who["submitter"])
    assert any(
        e["action"] == "reclassify" and e["reason"] == "reclassified to RDI: not orderable"
        for e in timeline.json()["data"]
    )


def test_a_disputes_steps_over_the_api(
    settings: Settings, database: Database, tmp_path: Path
) -> None:
    tokens = {**create_accounts(database), **create_neutral_members(database)}
    sid = in_dispute(database, settings, archive_of(tmp_path, "disputed"))
    clock = SetClock(pt(2027, 1, 12, 9))
    with TestClient(create_app(settings, queue=RecordingQueue(), clock=clock)) as client:
        with database.session() as session:
            public_id = must(session.get(Submission, sid)).public_id
        url = f"/api/v1/submissions/{public_id}/dispute"
        who = {k: bearer(v) for k, v in tokens.items()}
        assert client.post(f"{url}/nonsense", json={}, headers=who["chair"]).status_code == 404
        panel = {"panel": ["neutral1@mlcommons.example"]}
        assert (
            client.post(f"{url}/certification", json=panel, headers=who["reviewer2"]).status_code
            == 403
        )
        certified = client.post(f"{url}/certification", json=panel, headers=who["chair"])
        assert certified.status_code == 200, certified.text
        assert certified.json()["panel"] == ["neutral1@mlcommons.example"]
        assert certified.json()["statements_by"] == "2027-01-27T23:59:59-08:00"
        outsider = client.post(f"{url}/statements", json={"body": "b"}, headers=who["reviewer2"])
        assert outsider.status_code == 403 and outsider.json()["error"]["code"] == "not-a-party"
        stated = client.post(f"{url}/statements", json={"body": "640 s"}, headers=who["submitter"])
        assert [s["party"] for s in stated.json()["statements"]] == ["submitter"]
        assert client.get(url, headers=who["reviewer"]).json()["statements"][0]["body"] == "640 s"
        assert client.get(url).status_code == 404  # the review's record, not the public's


def test_the_audit_rounds_over_the_api(env) -> None:  # type: ignore[no-untyped-def]
    client, who, _sid = env
    assert client.post("/api/v1/audit-rounds", json={"quarter": "2027-Q1"},
                       headers=who["reviewer"]).status_code == 403  # fmt: skip
    opened = client.post("/api/v1/audit-rounds", json={"quarter": "2027-Q1"}, headers=who["chair"])
    assert opened.status_code == 201 and opened.json()["nominations"] == []
    assert client.post("/api/v1/audit-rounds/2027-Q1/recount", json={},
                       headers=who["chair"]).status_code == 404  # fmt: skip
    ballot = {"ranking": ["none"]}
    voted = client.post(
        "/api/v1/audit-rounds/2027-Q1/ballots", json=ballot, headers=who["reviewer"]
    )
    assert voted.status_code == 200 and voted.json()["ballots"] == 1
    outsider = client.post("/api/v1/audit-rounds/2027-Q1/ballots", json=ballot,
                           headers=who["submitter"])  # fmt: skip
    assert outsider.status_code == 403 and outsider.json()["error"]["code"] == "not-on-committee"
    tallied = client.post("/api/v1/audit-rounds/2027-Q1/tally", json={}, headers=who["chair"])
    assert tallied.json()["tally"] == [{"none": 1}] and tallied.json()["audits"] == []
    listed = client.get("/api/v1/audit-rounds", headers=who["reviewer"]).json()["data"]
    assert [r["quarter"] for r in listed] == ["2027-Q1"]
    assert client.get("/api/v1/audit-rounds", headers=who["submitter"]).status_code == 403
