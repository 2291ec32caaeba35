"""Fraud reports over the API (rules §11.5, SR §8.4): any member files one, two neutral
members screen it, the chair decides; confidential to them and the filer until the
outcome changes the result, which then goes on the submission's timeline."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.pipeline import run_checks
from app.settings import Settings
from tests.support.accounts import bearer, create_accounts, create_neutral_members
from tests.support.fakes import RecordingQueue

Who = dict[str, dict[str, str]]


@pytest.fixture
def env(
    settings: Settings, database: Database, good_archive: Path
) -> Iterator[tuple[TestClient, Who, str, str]]:
    """Acme's submission in review and a fraud report on it by Cumulus's reviewer."""
    tokens = {**create_accounts(database), **create_neutral_members(database)}
    queue = RecordingQueue()
    with TestClient(create_app(settings, queue=queue)) as client:
        who = {k: bearer(v) for k, v in tokens.items()}
        upload = client.post("/api/v1/submissions", headers=who["submitter"],
                             files={"file": ("g.tar.gz", good_archive.read_bytes())})  # fmt: skip
        assert upload.status_code == 201, upload.text
        with database.session() as session:
            run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
        sid = upload.json()["id"]
        filed = client.post(
            f"/api/v1/submissions/{sid}/fraud-reports",
            json={"allegation": "Staged hardware", "evidence": "the rack photo is a render"},
            headers=who["reviewer"],
        )
        assert filed.status_code == 201, filed.text
        yield client, who, sid, filed.json()["id"]


def _screen(client: TestClient, who: dict[str, str], rid: str, finding: str = "substantiated"):  # type: ignore[no-untyped-def]
    body = {"finding": finding, "note": "checked the invoices"}
    return client.post(f"/api/v1/fraud-reports/{rid}/screenings", json=body, headers=who)


def _inbox(client: TestClient, who: dict[str, str]) -> list[str]:
    return [n["subject"] for n in client.get("/api/v1/inbox", headers=who).json()["data"]]


def test_a_report_is_screened_by_two_neutral_members_then_decided_by_the_chair(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid, rid = env
    # Confidential: the chairs, the neutral members and the filer; not the accused.
    assert any(s.startswith("Fraud report to screen") for s in _inbox(client, who["neutral1"]))
    assert not any("Fraud" in s for s in _inbox(client, who["submitter"]))
    listed = client.get(f"/api/v1/submissions/{sid}/fraud-reports", headers=who["submitter"])
    assert listed.status_code == 200 and listed.json()["data"] == []
    assert client.get(f"/api/v1/fraud-reports/{rid}", headers=who["submitter"]).status_code == 404
    mine = client.get(f"/api/v1/fraud-reports/{rid}", headers=who["reviewer"]).json()
    assert mine["state"] == "screening" and not mine["can_screen"]
    # Only neutral members screen, once each; the chair decides after two.
    refused = _screen(client, who["reviewer"], rid)
    assert refused.status_code == 403 and "neutral member" in refused.json()["error"]["message"]
    assert _screen(client, who["neutral1"], rid).status_code == 200
    again = _screen(client, who["neutral1"], rid)
    assert again.status_code == 409 and again.json()["error"]["code"] == "screened"
    decision = {"outcome": "reclassified", "availability": "RDI", "reason": "not as shipped"}
    url = f"/api/v1/fraud-reports/{rid}/decision"
    early = client.post(url, json=decision, headers=who["chair"])
    assert early.status_code == 409 and early.json()["error"]["code"] == "screening-incomplete"
    screened = _screen(client, who["neutral2"], rid, "unsubstantiated").json()
    assert [s["finding"] for s in screened["screenings"]] == ["substantiated", "unsubstantiated"]
    assert client.post(url, json=decision, headers=who["neutral1"]).status_code == 403
    done = client.post(url, json=decision, headers=who["chair"])
    assert done.status_code == 200, done.text
    assert (done.json()["state"], done.json()["outcome"]) == ("decided", "reclassified")
    # The outcome changed the result: now the submitter hears of it, on its timeline.
    detail = client.get(f"/api/v1/submissions/{sid}", headers=who["submitter"]).json()
    assert {s["availability"] for s in detail["standing"]} == {"RDI"}
    timeline = client.get(f"/api/v1/submissions/{sid}/timeline", headers=who["submitter"])
    assert any(
        e["action"] == "reclassify" and f"fraud report {rid[:8]}: not as shipped" in e["reason"]
        for e in timeline.json()["data"]
    )
    assert "Fraud report decided: reclassified" in _inbox(client, who["reviewer"])
    twice = client.post(url, json=decision, headers=who["chair"])
    assert twice.status_code == 409 and twice.json()["error"]["code"] == "decided"


def test_a_report_upheld_in_review_rejects_the_submission(env) -> None:  # type: ignore[no-untyped-def]
    client, who, sid, rid = env
    for neutral in ("neutral1", "neutral2"):
        assert _screen(client, who[neutral], rid).status_code == 200
    url = f"/api/v1/fraud-reports/{rid}/decision"
    unknown = client.post(url, json={"outcome": "banished", "reason": "x"}, headers=who["chair"])
    assert unknown.status_code == 422
    removed = client.post(url, json={"outcome": "removed", "reason": "fabricated logs"},
                          headers=who["chair"])  # fmt: skip
    assert removed.status_code == 200, removed.text
    state = client.get(f"/api/v1/submissions/{sid}", headers=who["submitter"]).json()["state"]
    assert state == "rejected"
    # Nothing is left to report on a rejected submission.
    late = client.post(f"/api/v1/submissions/{sid}/fraud-reports", headers=who["reviewer2"],
                       json={"allegation": "more", "evidence": "more"})  # fmt: skip
    assert late.status_code == 409 and late.json()["error"]["code"] == "closed"
