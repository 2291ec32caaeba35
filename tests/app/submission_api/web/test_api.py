"""The Submission API's door: what it takes and refuses at entry, before any service acts
(times without a zone, a CLI older than the minimum, another organisation's run, a key
the portal does not know)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from endpoints_submission_cli.runs.parser import build_archive, parse_run_folder
from fastapi.testclient import TestClient

from app.db.session import Database
from app.demo.bundles import BundleFactory
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.fakes import RecordingQueue


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    return BundleFactory().run_folders(tmp_path / "runs")[0]


@pytest.fixture
def api(
    settings: Settings, database: Database, run_folder: Path
) -> tuple[TestClient, dict[str, str], dict[str, Any]]:
    tokens = create_accounts(database)
    payload = parse_run_folder(run_folder)
    client = TestClient(create_app(settings, queue=RecordingQueue()))
    return client, tokens, payload


def _key(tokens: dict[str, str], who: str = "submitter") -> dict[str, str]:
    return {"X-API-Key": tokens[who]}


def test_a_time_without_its_zone_is_refused_naming_the_field(
    api: tuple[TestClient, dict[str, str], dict[str, Any]],
) -> None:
    client, tokens, payload = api
    naive = {**payload, "started_at": "2026-12-01T10:00:00"}
    answer = client.post("/submission-api/runs", json=naive, headers=_key(tokens))
    assert answer.status_code == 422
    assert "started_at" in answer.text and "timezone" in answer.text
    assert client.get("/submission-api/runs", headers=_key(tokens)).json() == []


def test_an_older_cli_is_answered_426_with_the_release_to_install(
    api: tuple[TestClient, dict[str, str], dict[str, Any]], settings: Settings
) -> None:
    client, tokens, payload = api
    answer = client.post("/submission-api/runs", json={**payload, "cli_version": "1.0.0"},
                         headers=_key(tokens))  # fmt: skip
    assert answer.status_code == 426
    detail = answer.json()["detail"]
    assert settings.submission_api_minimum_cli in detail and "pip install" in detail
    assert client.get("/submission-api/runs", headers=_key(tokens)).json() == []


def test_a_run_is_its_organisations_alone_and_an_unknown_key_is_401(
    api: tuple[TestClient, dict[str, str], dict[str, Any]],
) -> None:
    client, tokens, payload = api
    made = client.post("/submission-api/runs", json=payload, headers=_key(tokens))
    assert made.status_code == 201, made.text
    run_id = made.json()["id"]
    assert client.get(f"/submission-api/runs/{run_id}", headers=_key(tokens)).status_code == 200
    for route in (f"/runs/{run_id}", f"/runs/{run_id}/archive/upload-url"):
        assert (
            client.get(f"/submission-api{route}", headers=_key(tokens, "rival")).status_code == 404
        )
    assert (
        client.delete(f"/submission-api/runs/{run_id}", headers=_key(tokens, "rival")).status_code
        == 404
    )
    assert client.get("/submission-api/runs", headers={"X-API-Key": "mlc_nope"}).status_code == 401


def test_a_runs_archive_goes_up_through_its_signed_url_and_comes_back_through_another(
    api: tuple[TestClient, dict[str, str], dict[str, Any]], run_folder: Path, tmp_path: Path
) -> None:
    """The two routes that stream or wait (the signed PUT, the archive's download URL),
    in the web process's loop: their database work is done off it (tests/conftest.py
    refuses a query made on the loop)."""
    client, tokens, payload = api
    run_id = client.post("/submission-api/runs", json=payload, headers=_key(tokens)).json()["id"]
    early = client.get(f"/submission-api/runs/{run_id}/archive", headers=_key(tokens))
    assert early.status_code == 409 and "no archive yet" in early.text
    signed = client.get(f"/submission-api/runs/{run_id}/archive/upload-url", headers=_key(tokens))
    upload = urlsplit(signed.json()["upload_url"])
    archive = build_archive(run_folder, tmp_path / "run.tar.gz").read_bytes()
    taken = client.put(f"{upload.path}?{upload.query}", content=archive)
    assert taken.status_code == 200 and taken.json()["status"] == "taken", taken.text
    again = client.put(f"{upload.path}?{upload.query}", content=archive)
    assert again.status_code >= 400  # a signed URL works once
    got = client.get(f"/submission-api/runs/{run_id}/archive", headers=_key(tokens))
    assert got.status_code == 200, got.text
    download = urlsplit(got.json()["download_url"])
    assert client.get(f"{download.path}?{download.query}").content == archive
    rival = client.get(f"/submission-api/runs/{run_id}/archive", headers=_key(tokens, "rival"))
    assert rival.status_code == 404
