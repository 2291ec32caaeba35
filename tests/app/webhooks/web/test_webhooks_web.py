"""/api/v1/webhooks and /webhooks: a member's own webhooks, over the API and in the
browser's forms (the authorisation walk covers the refusals of every caller)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, PASSWORD, bearer, create_accounts, form_token
from tests.support.fakes import RecordingQueue

HOOK = "https://93.184.216.34/hooks/mlperf"


@pytest.fixture
def client(settings: Settings, database: Database) -> TestClient:
    return TestClient(create_app(settings, queue=RecordingQueue()))


@pytest.fixture
def tokens(database: Database) -> dict[str, str]:
    return create_accounts(database)


def test_a_member_subscribes_lists_resumes_and_deletes_a_webhook(
    client: TestClient, tokens: dict[str, str]
) -> None:
    mine, theirs = bearer(tokens["submitter"]), bearer(tokens["rival"])
    asked = {"url": HOOK, "events": ["cohort.released"], "benchmark": "llama3_1-8b"}
    made = client.post("/api/v1/webhooks", json=asked, headers=mine)
    assert made.status_code == 201, made.text
    hook = made.json()
    assert hook["events"] == ["cohort.released"] and hook["benchmark"] == "llama3_1-8b"
    assert hook["secret"].startswith("whsec_") and hook["deliveries"] == []
    listed = client.get("/api/v1/webhooks", headers=mine).json()["data"]
    assert [h["id"] for h in listed] == [hook["id"]]
    assert client.get("/api/v1/webhooks", headers=theirs).json()["data"] == []
    # Another member cannot read its secret, resume or delete it.
    for method, path in (("GET", ""), ("POST", "/resume"), ("DELETE", "")):
        refused = client.request(method, f"/api/v1/webhooks/{hook['id']}{path}", headers=theirs)
        assert refused.status_code == 403, (method, path, refused.text)
    assert client.get("/api/v1/webhooks").status_code == 401
    assert (
        client.get(f"/api/v1/webhooks/{hook['id']}", headers=mine).json()["secret"]
        == (hook["secret"])
    )
    assert client.post(f"/api/v1/webhooks/{hook['id']}/resume", headers=mine).status_code == 200
    assert client.delete(f"/api/v1/webhooks/{hook['id']}", headers=mine).status_code == 204
    assert client.get(f"/api/v1/webhooks/{hook['id']}", headers=mine).status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "http://127.0.0.1:8000/in"}, "url"),
        ({"url": "http://10.0.0.2/in"}, "url"),
        ({"url": HOOK, "events": ["cohort.exploded"]}, "events"),
        ({"url": HOOK, "benchmark": "a b"}, "benchmark"),
    ],
)
def test_a_refused_webhook_says_what_and_where(
    client: TestClient, tokens: dict[str, str], body: dict[str, object], field: str
) -> None:
    answer = client.post("/api/v1/webhooks", json=body, headers=bearer(tokens["submitter"]))
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["field"] == field and error["message"]


def test_the_webhooks_page_subscribes_and_shows_the_secret_and_deliveries(
    client: TestClient, tokens: dict[str, str]
) -> None:
    assert client.get("/webhooks", follow_redirects=False).headers["location"].startswith("/login")
    login = {"email": ACCOUNTS["submitter"][0], "password": PASSWORD,
             "csrf_token": form_token(client)}  # fmt: skip
    signed = client.post("/login", data=login, follow_redirects=False)
    assert signed.status_code == 303
    page = client.get("/webhooks").text
    assert 'id="subscribe"' in page and 'id="nav-webhooks"' in page
    token = form_token(client, "/webhooks")
    sent = client.post("/webhooks", data={"url": HOOK, "events": ["result.invalidated"],
                                          "csrf_token": token}, follow_redirects=False)  # fmt: skip
    assert sent.status_code == 303 and sent.headers["location"] == "/webhooks"
    page = client.get("/webhooks").text
    assert HOOK in page and re.search(r"whsec_[A-Za-z0-9+/=]+", page)
    assert "Nothing sent yet." in page
    refused = client.post("/webhooks", data={"url": "http://127.0.0.1/in", "csrf_token": token})
    assert refused.status_code == 422 and "loopback" in refused.text
