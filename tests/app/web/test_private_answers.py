"""Answers to a caller with credentials are for that caller alone (issue 44): every
authenticated page and API answer says ``Cache-Control: private, no-store``, whatever
route gives it; static files keep their immutable caching, and public answers to
anonymous visitors are not marked."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, PASSWORD, bearer, create_accounts, form_token
from tests.support.fakes import RecordingQueue

PRIVATE = "private, no-store"


@pytest.fixture
def signed_in(
    settings: Settings, database: Database, good_archive: Path
) -> Iterator[tuple[TestClient, str, str]]:
    """A browser signed in as Acme's submitter, its token, and its submission's id."""
    tokens = create_accounts(database)
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        sent = client.post(
            "/api/v1/submissions",
            files={"file": ("b.tar.gz", good_archive.read_bytes())},
            headers=bearer(tokens["submitter"]),
        )
        assert sent.status_code == 201, sent.text
        client.post("/login", data={"email": ACCOUNTS["submitter"][0], "password": PASSWORD,
                                    "csrf_token": form_token(client)})  # fmt: skip
        yield client, tokens["submitter"], sent.json()["id"]


def test_every_authenticated_answer_is_private(signed_in: tuple[TestClient, str, str]) -> None:
    client, token, sid = signed_in
    for path in ("/submissions", f"/submissions/{sid}", "/inbox", "/upload", "/nope"):
        assert client.get(path).headers.get("cache-control") == PRIVATE, path
    api = TestClient(client.app)
    for path in (
        f"/api/v1/submissions/{sid}",
        f"/api/v1/submissions/{sid}/archive",
        "/api/v1/inbox",
        "/api/v1/results",
        "/api/v1/submissions/nope",
    ):
        answer = api.get(path, headers=bearer(token))
        assert answer.headers.get("cache-control") == PRIVATE, path


def test_static_files_and_anonymous_public_answers_keep_their_caching(
    signed_in: tuple[TestClient, str, str],
) -> None:
    client, token, _ = signed_in
    link = re.search(r'(/static/app\.css\?v=[0-9a-f]+)"', client.get("/").text)
    assert link is not None
    assert "immutable" in client.get(link.group(1)).headers["cache-control"]
    anonymous = TestClient(client.app)
    assert "cache-control" not in anonymous.get("/api/v1/results").headers
    assert "cache-control" not in anonymous.get("/api/v1/cohorts").headers
