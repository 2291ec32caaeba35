"""Corrections through the API and the submission page's forms (rules §11.7): the
corrected bundle uploaded as multipart, compared and queued; a refusal naming the file
whose results differ, said beside the form with nothing kept; the chair's verdict."""

from __future__ import annotations

import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db.models import Correction
from app.db.session import Database
from app.main import create_app
from app.pipeline import JOB_KINDS, run_checks
from app.settings import Settings
from tests.support.accounts import ACCOUNTS, PASSWORD, bearer, create_accounts, form_token
from tests.support.bundles import tar_bytes
from tests.support.corrections import Bundles, bundles, change_result, fix_readme
from tests.support.fakes import RecordingQueue
from tests.support.hostile import gnu_long_name, zip_overlap

Env = tuple[TestClient, dict[str, dict[str, str]], str, Bundles, RecordingQueue]


@pytest.fixture
def env(settings: Settings, database: Database, tmp_path: Path) -> Iterator[Env]:
    """Acme's submission in review, uploaded and checked over the API."""
    who = {k: bearer(v) for k, v in create_accounts(database).items()}
    queue = RecordingQueue()
    made = bundles(tmp_path)
    archive = made.archive("submitted")
    with TestClient(create_app(settings, queue=queue)) as client:
        upload = client.post("/api/v1/submissions", headers=who["submitter"],
                             files={"file": ("s.tar.gz", archive.read_bytes())})  # fmt: skip
        assert upload.status_code == 201, upload.text
        with database.session() as session:
            run_checks(session=session, settings=settings, job_id=queue.sent[-1][0])
        yield client, who, upload.json()["id"], made, queue


def _post(client: TestClient, sid: str, archive: Path, headers: dict[str, str]):  # type: ignore[no-untyped-def]
    return client.post(f"/api/v1/submissions/{sid}/corrections", headers=headers,
                       files={"file": (archive.name, archive.read_bytes())},
                       data={"reason": "the README's launch flags"})  # fmt: skip


def test_a_correction_over_the_api_is_queued_listed_and_applied_by_the_worker(
    env: Env, settings: Settings, database: Database
) -> None:
    client, who, sid, made, queue = env
    refused = _post(client, sid, made.archive("bad", change_result), who["submitter"])
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "results-changed" and "result_summary.json differs" in error["message"]
    assert client.get(f"/api/v1/submissions/{sid}/corrections",
                      headers=who["submitter"]).json()["data"] == []  # fmt: skip

    filed = _post(client, sid, made.archive("good", fix_readme), who["submitter"])
    assert filed.status_code == 202, filed.text
    body = filed.json()
    assert body["state"] == "checking" and body["after_finalization"] is False
    assert [f.endswith("README.md") for f in body["changed_files"]] == [True]
    job_id, kind = queue.sent[-1][0], JOB_KINDS["check_correction"]
    with database.session() as session:
        kind.run(session=session, settings=settings, job_id=job_id, queue=queue)
    [listed] = client.get(f"/api/v1/submissions/{sid}/corrections",
                          headers=who["reviewer"]).json()["data"]  # fmt: skip
    assert listed["id"] == body["id"] and listed["state"] == "applied"
    # Not the chair's to approve in review; nothing of it for a signed-out caller.
    decision = client.post(f"/api/v1/submissions/{sid}/corrections/{body['id']}/decision",
                           json={"approve": True}, headers=who["chair"])  # fmt: skip
    assert decision.status_code == 409 and decision.json()["error"]["code"] == "not-requested"
    assert client.get(f"/api/v1/submissions/{sid}/corrections").status_code in (401, 404)


def _sign_in(client: TestClient, key: str) -> str:
    client.cookies.clear()
    signed = client.post("/login", data={"email": ACCOUNTS[key][0], "password": PASSWORD,
                                         "csrf_token": form_token(client)},
                         follow_redirects=False)  # fmt: skip
    assert signed.status_code == 303
    return form_token(client, "/")


def test_the_page_offers_the_form_and_says_a_refusal_beside_it(env: Env) -> None:
    client, _, sid, made, queue = env
    token = _sign_in(client, "submitter")
    page = client.get(f"/submissions/{sid}")
    assert 'id="corrections"' in page.text and 'class="correction-form"' in page.text
    sent = len(queue.sent)
    bad = made.archive("bad", change_result)
    refused = client.post(f"/submissions/{sid}/corrections",
                          data={"reason": "typo", "csrf_token": token},
                          files={"file": (bad.name, bad.read_bytes())})  # fmt: skip
    assert refused.status_code == 409
    assert 'id="correction-error"' in refused.text and "result_summary.json differs" in refused.text
    assert 'value="typo"' in refused.text  # the form filled in again
    assert len(queue.sent) == sent
    good = made.archive("good", fix_readme)
    done = client.post(f"/submissions/{sid}/corrections",
                       data={"reason": "the README", "csrf_token": token},
                       files={"file": (good.name, good.read_bytes())},
                       follow_redirects=False)  # fmt: skip
    assert done.status_code == 303 and done.headers["location"].endswith("#corrections")
    shown = client.get(f"/submissions/{sid}").text
    assert "state-checking" in shown and "the README" in shown
    assert 'id="correction-note"' in shown and "not decided yet" in shown
    # The committee sees the list, never the upload form.
    _sign_in(client, "reviewer")
    theirs = client.get(f"/submissions/{sid}").text
    assert "state-checking" in theirs and 'class="correction-form"' not in theirs


def _traversal() -> bytes:
    info = tarfile.TarInfo("Acme_Corp/sub-corr/../../escaped.txt")
    info.size = 2
    return tar_bytes([(info, b"hi")])


@pytest.mark.parametrize(
    ("name", "archive"),
    [
        ("traversal.tar.gz", _traversal),
        ("long-name.tar.gz", gnu_long_name),
        ("overlap.zip", zip_overlap),
        ("garbage.tar.gz", lambda: b"\x1f\x8b not really gzip"),
    ],
)
def test_a_hostile_correction_is_refused_in_the_reading_child_and_leaves_nothing(
    env: Env, settings: Settings, database: Database, name: str, archive: Callable[[], bytes]
) -> None:
    client, who, sid, _made, queue = env
    sent = len(queue.sent)
    refused = client.post(f"/api/v1/submissions/{sid}/corrections", headers=who["submitter"],
                          files={"file": (name, archive())}, data={"reason": "docs"})  # fmt: skip
    assert 400 <= refused.status_code < 500, refused.text
    assert refused.json()["error"]["message"]
    assert len(queue.sent) == sent
    with database.session() as session:
        assert session.scalar(select(func.count()).select_from(Correction)) == 0
    assert list(settings.data_dir.parent.rglob("escaped.txt")) == []  # nowhere on disk
    leftovers = list(settings.tmp_dir.iterdir()) if settings.tmp_dir.exists() else []
    assert leftovers == [], leftovers
