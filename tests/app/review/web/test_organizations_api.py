"""/api/v1/organizations: the chair sets jurisdictions and committee appointments."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import bearer, create_accounts
from tests.support.fakes import RecordingQueue


@pytest.fixture
def env(
    settings: Settings, database: Database
) -> Iterator[tuple[TestClient, dict[str, dict[str, str]]]]:
    tokens = create_accounts(database)
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        yield client, {k: bearer(v) for k, v in tokens.items()}


def test_the_chair_sets_a_jurisdiction_and_appoints_to_the_committee(env) -> None:  # type: ignore[no-untyped-def]
    client, who = env
    assert client.get("/api/v1/organizations").status_code == 401
    listed = {
        o["slug"]: o
        for o in client.get("/api/v1/organizations", headers=who["submitter"]).json()["data"]
    }
    acme = next(slug for slug, o in listed.items() if o["name"] == "Acme Corp")
    assert listed[acme]["on_committee"] is False  # no finalized result, not appointed
    cumulus = next(slug for slug, o in listed.items() if o["name"] == "Cumulus Cloud")
    assert listed[cumulus]["on_committee"] is True  # appointed (the fixtures' reviewers)
    url = f"/api/v1/organizations/{acme}"
    assert client.patch(url, json={"country": "US"}, headers=who["submitter"]).status_code == 403
    changed = client.patch(
        url, json={"country": "us", "subdivision": "ca", "committee_appointed": True},
        headers=who["chair"],
    )  # fmt: skip
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["country"], body["subdivision"], body["on_committee"]) == ("US", "CA", True)
    bad = client.patch(url, json={"country": "XX"}, headers=who["chair"])
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "bad-country"
    bad_sub = client.patch(url, json={"subdivision": "ZZ"}, headers=who["chair"])
    assert bad_sub.status_code == 422 and bad_sub.json()["error"]["code"] == "bad-subdivision"
    # A refusal changes nothing; only the fields sent change.
    kept = client.patch(url, json={"committee_appointed": False}, headers=who["chair"]).json()
    assert (kept["country"], kept["subdivision"], kept["on_committee"]) == ("US", "CA", False)
    unknown = client.patch("/api/v1/organizations/nope", json={}, headers=who["chair"])
    assert unknown.status_code == 404
