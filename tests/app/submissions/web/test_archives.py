"""Archives in the artifact store: uploaded to it, given back byte for byte, refused
whole when the store is down, and never served damaged."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.db.models import Job, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory
from app.jobs.runner import run_job
from app.main import create_app
from app.pipeline import JOB_KINDS, run_checks
from app.settings import Settings
from app.storage import archive_key
from tests.support.accounts import bearer, create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.objectstore import BUCKET, Partition, shared_object_store
from tests.support.rows import must
from tests.support.services import migrated_sqlite


@dataclass
class Portal:
    client: TestClient
    tokens: dict[str, str]
    database: Database
    queue: RecordingQueue

    def run_queued_checks(self, settings: Settings) -> None:
        """The checks uploads queued, run here as the worker would (they make the points)."""
        with self.database.session() as session:
            for job_id, _kind in self.queue.sent:
                run_checks(session=session, settings=settings, job_id=job_id)
        self.queue.sent.clear()


def _portal(settings: Settings) -> Portal:
    migrated_sqlite(settings.data_dir)
    database = Database(settings.effective_database_url)
    queue = RecordingQueue()
    client = TestClient(create_app(settings, queue=queue))
    return Portal(client, create_accounts(database), database, queue)


def _upload(client: TestClient, token: str, archive: Path):  # type: ignore[no-untyped-def]
    return client.post(
        "/api/v1/submissions",
        files={"file": (archive.name, archive.read_bytes())},
        headers=bearer(token),
    )


def _count(database: Database) -> int:
    with database.session() as session:
        return int(session.scalar(select(func.count()).select_from(Submission)) or 0)


@pytest.fixture
def on_s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    store = shared_object_store()
    for name, value in store.env.items():
        monkeypatch.setenv(name, value)
    yield Settings(
        data_dir=tmp_path / "data",
        database_url=None,
        redis_url=None,
        storage_url=store.new_url(),
        storage_cache_dir=tmp_path / "cache",
    )


def test_an_upload_lives_in_the_bucket_and_comes_back_byte_for_byte(
    on_s3: Settings, good_archive: Path
) -> None:
    portal = _portal(on_s3)
    client, tokens, database = portal.client, portal.tokens, portal.database
    with client:
        answer = _upload(client, tokens["submitter"], good_archive)
        assert answer.status_code == 201, answer.text
        sid = answer.json()["id"]
        import hashlib

        sha = hashlib.sha256(good_archive.read_bytes()).hexdigest()
        prefix = on_s3.effective_storage_url.removeprefix(f"s3://{BUCKET}/") + "/"
        listed = shared_object_store().client().list_objects_v2(Bucket=BUCKET, Prefix=prefix)
        names = {item["Key"].removeprefix(prefix) for item in listed.get("Contents", [])}
        assert archive_key(sha) in names
        # Nothing of the archive under the data directory: the store holds it.
        assert not on_s3.blobs_dir.exists() or not any(on_s3.blobs_dir.rglob("*"))
        assert not any(on_s3.tmp_dir.glob("upload-*"))

        download = client.get(
            f"/api/v1/submissions/{sid}/archive", headers=bearer(tokens["submitter"])
        )
        assert download.status_code == 200
        assert download.content == good_archive.read_bytes()
        assert download.headers["content-type"] == "application/gzip"
        # Named as a person knows the bundle: its own id, then the portal's short one.
        own = client.get(f"/api/v1/submissions/{sid}", headers=bearer(tokens["submitter"]))
        named = f"{own.json()['bundle_submission_id']}-{sid[:8]}.tar.gz"
        assert download.headers["content-disposition"] == f'attachment; filename="{named}"'
        # The committee and the chair may have it too; another organisation and the
        # public may not, and learn nothing of it.
        for who in ("reviewer", "chair"):
            assert (
                client.get(
                    f"/api/v1/submissions/{sid}/archive", headers=bearer(tokens[who])
                ).status_code
                == 200
            )
        for headers in (bearer(tokens["rival"]), {}):
            refused = client.get(f"/api/v1/submissions/{sid}/archive", headers=headers)
            assert refused.status_code == 404, refused.text
            assert refused.json()["error"]["code"] == "not-found"
            assert "Acme" not in refused.text and good_archive.name not in refused.text
    database.dispose()


def test_a_damaged_or_missing_archive_is_reported_never_served(
    tmp_path: Path, good_archive: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=None, redis_url=None)
    portal = _portal(settings)
    client, tokens, database = portal.client, portal.tokens, portal.database
    import hashlib

    sha = hashlib.sha256(good_archive.read_bytes()).hexdigest()
    with client:
        sid = _upload(client, tokens["submitter"], good_archive).json()["id"]
        url = f"/api/v1/submissions/{sid}/archive"
        assert client.get(url, headers=bearer(tokens["chair"])).content == good_archive.read_bytes()
        stored = settings.blobs_dir / archive_key(sha)
        stored.write_bytes(good_archive.read_bytes()[:-100] + b"\0" * 100)
        damaged = client.get(url, headers=bearer(tokens["chair"]))
        assert damaged.status_code == 409
        assert damaged.json()["error"]["code"] == "archive-damaged"
        stored.unlink()
        assert client.get(url, headers=bearer(tokens["chair"])).json()["error"]["code"] == (
            "archive-damaged"
        )
    database.dispose()


def test_with_the_store_unreachable_an_upload_is_refused_whole_and_taken_when_it_is_back(
    tmp_path: Path, good_archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _behind_a_partition(tmp_path, monkeypatch, storage_attempts=2) as (partition, settings):
        portal = _portal(settings)
        client, tokens, database = portal.client, portal.tokens, portal.database
        with client:
            partition.cut()
            refused = _upload(client, tokens["submitter"], good_archive)
            assert refused.status_code == 503, refused.text
            error = refused.json()["error"]
            assert error["code"] == "storage-unavailable"
            assert "nothing was recorded" in error["message"]
            # The store's address and bucket are the operator's business, not the caller's.
            assert "127.0.0.1" not in refused.text and BUCKET not in refused.text
            assert _count(database) == 0  # no submission without its archive
            assert not any(settings.tmp_dir.glob("upload-*"))
            assert not settings.bundles_dir.exists() or not any(settings.bundles_dir.iterdir())

            partition.mend()
            taken = _upload(client, tokens["submitter"], good_archive)
            assert taken.status_code == 201, taken.text
            assert _count(database) == 1

            # A point's events uploaded while the store is out of reach: refused the same way.
            portal.run_queued_checks(settings)
            point = "Acme_H200_x8/llama3_1-8b/r16"
            events = f"/api/v1/submissions/{taken.json()['id']}/points/{point}/events"
            partition.cut()
            body = b'{"event": "request_start"}\n'
            down = client.put(events, content=body, headers=bearer(tokens["submitter"]))
            assert down.status_code == 503, down.text
            assert down.json()["error"]["code"] == "storage-unavailable"
            assert not any(settings.tmp_dir.glob("events-*"))
            partition.mend()
            download = client.get(
                f"/api/v1/submissions/{taken.json()['id']}/archive", headers=bearer(tokens["chair"])
            )
            assert download.content == good_archive.read_bytes()
        database.dispose()


def test_a_check_waits_for_the_store_and_completes_when_it_is_back(
    tmp_path: Path, good_archive: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker is on another host (no extracted bundle there) and the store goes out of
    reach: the check waits, saying so, with a growing delay; it completes once the store
    is back, and fails with the reason once it has waited its tries out."""
    with _behind_a_partition(tmp_path, monkeypatch, storage_attempts=1, storage_wait_tries=2) as (
        partition,
        settings,
    ):
        portal = _portal(settings)
        with portal.client:
            ids = []
            for archive in (good_archive, _other_archive(tmp_path)):
                taken = _upload(portal.client, portal.tokens["submitter"], archive)
                assert taken.status_code == 201, taken.text
                ids.append(taken.json()["id"])
        sent = list(portal.queue.sent)
        shutil.rmtree(settings.bundles_dir)  # the worker's host has extracted nothing
        check = JOB_KINDS["check_submission"]
        partition.cut()
        with portal.database.session() as session:
            for job_id, _ in sent:
                run_job(check, session=session, settings=settings, job_id=job_id,
                        queue=portal.queue)  # fmt: skip
                job = must(session.get(Job, job_id))
                assert job.state == "queued" and job.store_waits == 1
                assert job.stage == "waiting for the artifact store (try 2 in 5 s)"
                assert portal.queue.delays[job_id] == 5
                assert must(job.submission).state == "checking"  # the page says it is under way
                assert BUCKET not in (job.error or "") + job.stage

            waiting, given_up = sent
            run_job(check, session=session, settings=settings, job_id=given_up[0],
                    queue=portal.queue)  # fmt: skip
            assert portal.queue.delays[given_up[0]] == 10  # doubled
            run_job(check, session=session, settings=settings, job_id=given_up[0],
                    queue=portal.queue)  # fmt: skip
            failed = must(session.get(Job, given_up[0]))
            assert failed.state == "failed"
            assert must(failed.submission).state == "check_error"
            assert "could not be reached in 3 tries" in (
                must(failed.submission).error_message or ""
            )

            partition.mend()
            run_job(check, session=session, settings=settings, job_id=waiting[0],
                    queue=portal.queue)  # fmt: skip
            done = must(session.get(Job, waiting[0]))
            assert done.state == "succeeded", done.error
            assert must(done.submission).state == "passed_checks"
        portal.database.dispose()


def _other_archive(tmp_path: Path) -> Path:
    """A second bundle (other bytes, another submission) from the same factory."""
    return BundleFactory(submission_id="sub-0002").archive(tmp_path / "other.tar.gz")


@contextmanager
def _behind_a_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **limits: Any
) -> Iterator[tuple[Partition, Settings]]:
    """Settings for a store reached through a partition that a test can cut and mend."""
    store = shared_object_store()
    partition = Partition(store.endpoint)
    try:
        for name, value in {**store.env, "AWS_ENDPOINT_URL": partition.endpoint}.items():
            monkeypatch.setenv(name, value)
        yield partition, Settings(
            data_dir=tmp_path / "data", database_url=None, redis_url=None,
            storage_url=store.new_url(), storage_cache_dir=tmp_path / "cache",
            storage_timeout_s=1, **limits,
        )  # fmt: skip
    finally:
        partition.close()
