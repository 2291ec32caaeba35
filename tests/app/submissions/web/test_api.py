"""The REST API over ASGI, with a real database and a recording queue."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.checks.domain.rules import catalogue
from app.db.session import Database
from app.demo.bundles import BundleFactory
from app.main import create_app
from app.pipeline import run_checks
from app.settings import Settings
from tests.support.accounts import bearer, create_accounts, form_token
from tests.support.bundles import tar_bytes, upload
from tests.support.fakes import RecordingQueue


def test_upload_returns_201_with_links_and_queues_a_check(
    client: TestClient, queue: RecordingQueue, good_archive: Path
) -> None:
    response = upload(client, good_archive.read_bytes())
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["state"] == "received" and body["duplicate"] is False and body["for_review"] is True
    assert body["links"]["page"] == f"/submissions/{body['id']}"
    assert len(queue.sent) == 1
    again = upload(client, good_archive.read_bytes(), name="renamed.tgz")
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert again.json()["id"] == body["id"]
    assert len(queue.sent) == 1


@pytest.mark.parametrize(
    ("fmt", "layout"), [("zip", "org"), ("tar.gz", "submission"), ("zip", "submission")]
)
def test_zip_and_submission_root_layouts(
    client: TestClient, tmp_path: Path, fmt: str, layout: str
) -> None:
    archive = BundleFactory().archive(tmp_path / f"b.{fmt}", fmt=fmt, layout=layout)
    response = upload(client, archive.read_bytes(), name=archive.name, not_for_review="on")
    assert response.status_code == 201, response.text
    assert response.json()["for_review"] is False
    assert response.json()["organization"] == "Acme Corp"


def _member(
    name: str, kind: bytes = tarfile.REGTYPE, link: str = ""
) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return (info, b"x") if kind == tarfile.REGTYPE else (info, None)


@pytest.mark.parametrize(
    ("members", "status", "code"),
    [
        ([_member("../../etc/cron.d/evil")], 422, "path-traversal"),
        ([_member("/tmp/abs")], 422, "absolute-path"),
        ([_member("org/link", tarfile.SYMTYPE, "/etc/passwd")], 422, "symlink"),
        ([_member("org/a"), _member("org/hard", tarfile.LNKTYPE, "org/a")], 422, "hardlink"),
        ([_member("org/dev", tarfile.CHRTYPE)], 422, "special-file"),
        ([_member("photos/cat.jpg")], 422, "no-submission-root"),
    ],
)
def test_hostile_archives_get_a_4xx_json_error_naming_the_problem(
    client: TestClient, members: list[tuple[tarfile.TarInfo, bytes | None]], status: int, code: str
) -> None:
    response = upload(client, tar_bytes(members))
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    assert client.get("/api/v1/submissions").json()["count"] == 0


def test_limits_and_malformed_requests(
    settings: Settings, database: Database, queue: RecordingQueue, good_archive: Path
) -> None:
    small = settings.model_copy(update={"max_upload_bytes": 2048, "max_archive_members": 5})
    token = create_accounts(database)["submitter"]
    with TestClient(create_app(small, queue=queue), headers=bearer(token)) as client:
        too_big = upload(client, good_archive.read_bytes())
        assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "upload-too-large"
        many = upload(client, tar_bytes([_member(f"org/{i}") for i in range(6)]))
        assert many.status_code == 413 and many.json()["error"]["code"] == "too-many-members"
        assert upload(client, b"").json()["error"]["code"] == "empty-upload"
        not_archive = upload(client, b"hello, not an archive")
        assert not_archive.status_code == 415
        assert not_archive.json()["error"]["code"] == "unsupported-format"
        no_file = client.post(
            "/api/v1/submissions", data={"x": "1"}, files={"other": ("a.txt", b"x")}
        )
        assert no_file.status_code == 400 and no_file.json()["error"]["code"] == "no-file"
        json_body = client.post("/api/v1/submissions", json={"file": "x"})
        assert json_body.status_code == 415
    assert list(settings.tmp_dir.iterdir()) == []  # every refused upload was cleaned up


def test_the_status_resource_is_what_a_page_follows_while_checks_run(
    client: TestClient,
    settings: Settings,
    database: Database,
    queue: RecordingQueue,
    good_archive: Path,
) -> None:
    sid = upload(client, good_archive.read_bytes()).json()["id"]
    waiting = client.get(f"/api/v1/submissions/{sid}/status").json()
    assert waiting == {
        "id": sid, "state": "received", "state_label": waiting["state_label"],
        "finished": False, "verdict": None,
        "job": {"state": "queued", "stage": None, "progress": 0.0, "attempts": 0, "error": None},
        "recounts_running": 0, "reproductions_running": 0,
    }  # fmt: skip
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[0][0])
    done = client.get(f"/api/v1/submissions/{sid}/status").json()
    assert done["finished"] is True and done["verdict"] == "passed"
    assert done["job"]["state"] == "succeeded" and done["job"]["progress"] == 1.0
    # The page embeds the curves it drew from, the same the API serves: no second request.
    page = client.get(f"/submissions/{sid}").text
    embedded = page.split('id="submission-data">')[1].split("</script>")[0]
    detail = client.get(f"/api/v1/submissions/{sid}").json()
    assert json.loads(embedded)["curves"] == detail["curves"]
    schema = client.get("/openapi.json").json()
    answer = schema["paths"]["/api/v1/submissions/{public_id}/status"]["get"]["responses"]["200"]
    assert answer["content"]["application/json"]["schema"]["$ref"].endswith("/SubmissionStatus")
    assert client.get("/api/v1/submissions/nope/status").status_code == 404


def test_unknown_submission_is_404(client: TestClient) -> None:
    assert client.get("/api/v1/submissions/nope").status_code == 404
    assert client.get("/submissions/nope").status_code == 404


def test_openapi_documents_the_upload_and_the_rules(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    upload = schema["paths"]["/api/v1/submissions"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]
    assert {"201", "413", "415", "422"} <= set(upload["responses"])
    rules = schema["paths"]["/api/v1/rules"]["get"]["responses"]["200"]
    assert rules["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RuleCatalogue"
    }


def test_the_rule_catalogue_is_every_rule_with_what_it_checks(client: TestClient) -> None:
    body = client.get("/api/v1/rules").json()
    by_id = {r["id"]: r for r in body["data"]}
    assert body["checker_version"] == "1.5.3.0"
    assert len(by_id) == len(catalogue())
    # Official rules passed through, the portal's own from every stage.
    assert by_id["point-count"]["source"] == "official"
    assert by_id["path-traversal"] == {
        **by_id["path-traversal"],
        "stage": "upload",
        "source": "portal",
        "severity": "error",
    }
    assert {"recounted-output-tokens", "reproduction-margin", "readable-files"} <= set(by_id)
    upload = client.get("/api/v1/rules", params={"stage": "upload"}).json()["data"]
    assert upload and {r["stage"] for r in upload} == {"upload"}
    official = client.get("/api/v1/rules", params={"source": "official"}).json()["data"]
    assert {r["source"] for r in official} == {"official"}
    one = client.get("/api/v1/rules/symlink").json()
    assert one["title"] == "No symbolic links" and one["fix"]
    missing = client.get("/api/v1/rules/no-such-rule")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not-found"
    wrong = client.get("/api/v1/rules", params={"stage": "later"})
    assert wrong.status_code == 422 and wrong.json()["error"]["problems"][0]["field"] == "stage"


def test_the_rules_page_has_an_anchor_for_every_rule(client: TestClient) -> None:
    page = client.get("/rules")
    assert page.status_code == 200
    for rule_id in catalogue():
        assert f'id="rule-{rule_id}"' in page.text
    assert 'href="/rules"' in page.text  # the navigation leads here


def test_upload_page_refusal_is_shown_in_the_form(client: TestClient) -> None:
    form = client.get("/upload")
    assert form.status_code == 200 and 'name="not_for_review"' in form.text
    token = form_token(client, "/upload")
    evil = {"file": ("x.tar.gz", tar_bytes([_member("/etc/x")]))}
    response = client.post("/upload", files=evil, data={"csrf_token": token})
    assert response.status_code == 422
    assert "absolute-path" in response.text and "/etc/x" in response.text
    # What to do about it, and the rule it broke.
    assert 'href="/rules#rule-absolute-path"' in response.text
    assert (catalogue()["absolute-path"].fix or "") in response.text


def test_page_forms_refuse_a_missing_or_wrong_csrf_token(
    client: TestClient, good_archive: Path
) -> None:
    client.get("/upload")
    upload = {"file": ("g.tar.gz", good_archive.read_bytes())}
    assert client.post("/upload", files=upload).status_code == 403
    assert client.post("/upload", files=upload, data={"csrf_token": "guess"}).status_code == 403
    assert client.get("/api/v1/submissions").json()["count"] == 0
    assert client.post("/login", data={"email": "a@b.c", "password": "x"}).status_code == 403


def test_only_pages_hand_out_the_form_token(client: TestClient) -> None:
    """A fetch or an asset answered before a page must not set a browser id that a page's
    form (loaded at the same moment) would then no longer match."""
    assert "epp_browser" not in client.get("/api/v1/submissions").cookies
    assert "epp_browser" not in client.get("/static/app.css").cookies
    page = client.get("/login")
    browser = page.cookies.get("epp_browser")
    token = form_token(client)
    assert browser and token != browser  # a signed token, not the cookie itself
    assert client.get("/api/v1/submissions").status_code == 200
    assert client.cookies.get("epp_browser") == browser  # kept, not replaced
    assert form_token(client) == token


def test_security_headers(client: TestClient) -> None:
    headers = client.get("/").headers
    assert headers["x-content-type-options"] == "nosniff"
    csp = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "http" not in csp


def test_publication_mode_is_chosen_at_upload(
    client: TestClient, good_archive: Path, tmp_path: Path
) -> None:
    bad = upload(client, good_archive.read_bytes(), publication_mode="public-now")
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "bad-publication-mode"
    assert client.get("/api/v1/submissions").json()["count"] == 0  # nothing stored
    ok = upload(client, good_archive.read_bytes(), publication_mode="provisional")
    assert ok.status_code == 201 and ok.json()["publication_mode"] == "provisional"
    other = BundleFactory(submission_id="sub-x").archive(tmp_path / "other.tar.gz")
    default = upload(client, other.read_bytes())
    assert default.json()["publication_mode"] == "confidential"
