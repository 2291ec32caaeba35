"""The ledger's keys and entries as served (issue 50): the key is there from the first
start, an entry's bytes and signature are served as signed, a bad number says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.publishing.domain.ledger import key_id_of, load_public_pem, read_entry, read_keys
from app.settings import Settings
from tests.support.fakes import RecordingQueue
from tests.support.submissions import release_then_invalidate


def test_the_signing_key_exists_from_the_first_start(
    settings: Settings, database: Database
) -> None:
    client = TestClient(create_app(settings, queue=RecordingQueue()))
    made = settings.data_dir / "release-signing" / "current.pem"
    assert made.exists() and made.stat().st_mode & 0o077 == 0  # the portal's user's alone
    pem = client.get("/.well-known/release-signing-key.pem")
    assert pem.headers["content-type"].startswith("application/x-pem-file")
    [listed] = client.get("/.well-known/release-signing-keys.json").json()["keys"]
    assert listed["current"] and listed["first_used_at"] is None  # nothing signed yet
    assert listed["key_id"] == key_id_of(load_public_pem(pem.text))
    assert client.get("/api/v1/record/entries").json()["data"] == []


def test_a_key_file_that_is_no_ed25519_key_stops_the_portal(
    settings: Settings, tmp_path: Path
) -> None:
    bad = tmp_path / "key.pem"
    bad.write_text("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    with pytest.raises(ValueError):
        create_app(settings.model_copy(update={"release_signing_key_file": bad}),
                   queue=RecordingQueue())  # fmt: skip


def test_entries_are_served_as_signed(
    settings: Settings, database: Database, good_archive: Path
) -> None:
    release_then_invalidate(database, settings, good_archive)
    client = TestClient(create_app(settings, queue=RecordingQueue()))
    keys = read_keys(client.get("/.well-known/release-signing-keys.json").json())
    listed = client.get("/api/v1/record/entries", params={"after": 1, "limit": 2}).json()["data"]
    assert [e["seq"] for e in listed] == [2, 3]
    for item in listed:
        body = client.get(item["links"]["entry"]).content
        signature = client.get(item["links"]["signature"]).content
        keys[item["key_id"]].verify(signature, body)  # raises where it does not hold
        assert read_entry(body)["previous"] == item["previous"]
    assert client.get("/api/v1/record/entries/999").status_code == 404
    for bad in ("0", "-1", "99999999999999999999", "x"):
        assert client.get(f"/api/v1/record/entries/{bad}").status_code == 422, bad
