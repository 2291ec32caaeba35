"""Two organisations, a committee and a chair take a submission from upload to the public
curves through the API, against the real web and worker processes; the review clocks run
in the worker's scheduler and, moved forward, from the ``clock`` command."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import tarfile
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest

from app.core.cohorts import Cohort
from app.demo.bundles import BundleFactory, SystemSpec
from tests.support.accounts import ACCOUNTS
from tests.support.objectstore import shared_object_store
from tests.support.portal import RunningPortal

# PostgreSQL and Redis too: the worker there is how deployments run.
pytestmark = [pytest.mark.slow, pytest.mark.postgresql]
PT = ZoneInfo("America/Los_Angeles")


def _ok(response: httpx.Response, status: int = 200) -> dict:  # type: ignore[type-arg]
    assert response.status_code == status, response.text
    return response.json()  # type: ignore[no-any-return]


def test_upload_review_objection_penalty_finalize_publish(
    portal: RunningPortal, tmp_path: Path
) -> None:
    system = SystemSpec(name="Acme H200 review path", saturation_tps=51_000)
    archive = BundleFactory(system=system, submission_id="sub-path").archive(tmp_path / "p.tar.gz")
    with (
        portal.client("submitter") as acme,
        portal.client("reviewer") as cumulus,
        portal.client("reviewer2") as dune,
        portal.client("chair") as chair,
        portal.client() as public,
    ):
        sid = _ok(
            acme.post(
                "/api/v1/submissions",
                files={"file": (archive.name, archive.read_bytes())},
                data={"publication_mode": "confidential"},
            ),
            201,
        )["id"]
        body = portal.wait_finished(sid)
        assert body["state"] == "passed_checks", body
        review = _ok(chair.get(f"/api/v1/submissions/{sid}"))["review"]
        assert review["phase"] == "peer_review"
        assert review["reviewer"] in (ACCOUNTS["reviewer"][0], ACCOUNTS["reviewer2"][0])
        assert public.get(f"/api/v1/submissions/{sid}").status_code == 404  # confidential

        objection = _ok(
            cumulus.post(
                f"/api/v1/submissions/{sid}/objections",
                json={
                    "type": "methodology",
                    "title": "Warm-up not disclosed",
                    "rule_cited": "R §2.9",
                    "evidence": "point.yaml has no warmup block",
                },
            ),
            201,
        )
        assert objection["state"] == "open" and objection["by"] == ["Cumulus Cloud"]
        oid = objection["id"]
        inbox = _ok(acme.get("/api/v1/inbox"))
        assert any(n["subject"].startswith("Objection filed") for n in inbox["data"])

        # Three business days pass without an answer: the clock command applies the penalty.
        filed = dt.datetime.fromisoformat(objection["filed_at"])
        later = (filed.astimezone(PT) + dt.timedelta(days=7)).isoformat()
        assert "penalty" in portal.cli("clock", "--now", later)
        assert _ok(chair.get(f"/api/v1/submissions/{sid}"))["review"]["penalty_cohorts"] >= 1

        refused = acme.post(f"/api/v1/submissions/{sid}/decisions", json={"action": "finalize"})
        assert refused.status_code == 403
        blocked = chair.post(f"/api/v1/submissions/{sid}/decisions", json={"action": "finalize"})
        assert blocked.status_code == 409 and blocked.json()["error"]["code"] == "objections-open"

        _ok(
            acme.post(
                f"/api/v1/objections/{oid}/actions",
                json={"action": "acknowledge", "body": "Disclosed now in the README."},
            )
        )
        wrong_side = dune.post(f"/api/v1/objections/{oid}/actions", json={"action": "accept"})
        assert wrong_side.status_code == 403  # Dune did not object
        resolved = _ok(cumulus.post(f"/api/v1/objections/{oid}/actions", json={"action": "accept"}))
        assert resolved["state"] == "resolved"
        assert [m["action"] for m in resolved["thread"]] == ["file", "acknowledge", "accept"]

        # The assigned reviewer completes the review; only then may the chair finalize.
        unreviewed = chair.post(f"/api/v1/submissions/{sid}/decisions", json={"action": "finalize"})
        assert unreviewed.status_code == 409
        assert unreviewed.json()["error"]["code"] == "review-incomplete"
        assigned = cumulus if review["reviewer"] == ACCOUNTS["reviewer"][0] else dune
        _ok(assigned.post(f"/api/v1/submissions/{sid}/review-complete", json={"notes": "done"}))
        finalized = _ok(
            chair.post(f"/api/v1/submissions/{sid}/decisions", json={"action": "finalize"})
        )
        assert finalized["state"] == "finalized"
        due = _ok(chair.get(f"/api/v1/submissions/{sid}"))["review"]["due_cohort"]
        early = chair.post(f"/api/v1/cohorts/{due}/publish")  # before Wednesday 08:00 PT
        assert early.status_code == 409 and early.json()["error"]["code"] == "too-early"
        at = Cohort.parse(due).publication_at(PT).isoformat()  # type: ignore[union-attr]
        out = portal.cli("publish", due, "--now", at, "--actor", ACCOUNTS["chair"][0])
        assert f"published {sid} as verified in {due}" in out

        curves = _ok(public.get("/api/v1/results", params={"cohort": due}))["curves"]
        mine = [c for c in curves if c["submission"] == sid]
        assert mine and mine[0]["status"] == "verified" and mine[0]["result_id"].startswith("1.0.")
        # Finalized and published: results, findings and the bundle are public now; the
        # review record (timeline, objections, who reviewed) stays the members'.
        assert public.get(f"/api/v1/submissions/{sid}/findings").status_code == 200
        assert public.get(f"/submissions/{sid}/files").status_code == 200
        assert _ok(public.get(f"/api/v1/submissions/{sid}"))["review"] is None
        assert public.get(f"/api/v1/submissions/{sid}/timeline").status_code == 403
        assert public.get(f"/api/v1/submissions/{sid}/objections").status_code == 403
        page = public.get(f"/submissions/{sid}").text
        assert ACCOUNTS["reviewer"][0] not in page and ACCOUNTS["reviewer2"][0] not in page
        timeline = [
            e["action"] for e in _ok(chair.get(f"/api/v1/submissions/{sid}/timeline"))["data"]
        ]
        for step in (
            "objection filed",
            "penalty",
            "objection accepted the answer",
            "review completed",
            "finalize",
            "published",
        ):
            assert step in timeline, step
        export = public.get(f"/api/v1/cohorts/{due}/export")
        assert export.status_code == 200 and export.headers["content-type"] == "application/gzip"
        with tarfile.open(fileobj=io.BytesIO(export.content)) as tar:
            shared = _summaries(tar, f"endpoints-{due}/")
        with tarfile.open(archive) as tar:
            uploaded = _summaries(tar, "")
        # The result's files, byte for byte, from wherever the portal keeps the upload.
        assert uploaded and set(uploaded.values()) <= set(shared.values())
        download = acme.get(f"/api/v1/submissions/{sid}/archive")
        assert download.content == archive.read_bytes()

    if portal.worker_data_dir is not None:  # web and worker as separate hosts, on S3
        sha256 = hashlib.sha256(archive.read_bytes()).hexdigest()
        for data in (portal.data_dir, portal.worker_data_dir):
            assert not (data / "blobs").exists(), data  # every artifact went to the store
            assert not any(data.rglob(f"*{sha256}*")), data  # no copy, no extraction
        bucket, prefix = portal.env["ENDPOINTS_PORTAL_STORAGE_URL"][5:].split("/", 1)
        listed = shared_object_store().client().list_objects_v2(Bucket=bucket, Prefix=prefix)
        assert f"{prefix}/{sha256[:2]}/{sha256}" in {o["Key"] for o in listed["Contents"]}


def test_the_workers_scheduler_runs_the_review_clocks(portal: RunningPortal) -> None:
    """The demo's provisional result whose peer review closed with no objection has no
    completed review (the demo has no reviewers): the periodic clock task in the worker,
    with no command from anyone, does not finalize it but tells the chair, once."""
    with portal.client("chair") as chair:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            rows = _ok(chair.get("/api/v1/submissions", params={"limit": 200}))["data"]
            cumulus = next(r for r in rows if r["organization"] == "Cumulus Cloud")
            events = _ok(chair.get(f"/api/v1/submissions/{cumulus['id']}/timeline"))["data"]
            if any(e["action"] == "review incomplete" for e in events):
                break
            time.sleep(1)
        [told] = [e for e in events if e["action"] == "review incomplete"]
        assert told["actor"] == "system" and "no reviewer is assigned" in told["reason"]
        assert cumulus["state"] == "passed_checks", cumulus  # never finalized unreviewed
        inbox = _ok(chair.get("/api/v1/inbox"))["data"]
        assert sum(n["subject"].startswith("Review incomplete") for n in inbox) >= 1


def _summaries(tar: tarfile.TarFile, prefix: str) -> dict[str, bytes]:
    """The points' result summaries in an archive, by path."""
    found = {}
    for member in tar.getmembers():
        if member.name.startswith(prefix) and member.name.endswith("result_summary.json"):
            stream = tar.extractfile(member)
            assert stream is not None
            found[member.name] = stream.read()
    return found
