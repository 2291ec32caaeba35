"""Signed uploads on an S3-compatible store (the store's presigned URLs, a worker watching
the staging object): the URL is useless after its expiry, a second PUT to a used URL
changes nothing the portal took and its object is swept once the URL has expired. The
store is a real one (weed), the job the worker's own."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import httpx
import pytest
from endpoints_submission_cli.runs.parser import build_archive, parse_run_folder
from sqlalchemy import select

from app.accounts.services.accounts import principal_of_user, user_by_email
from app.db.models import MeasuredRun, TransferGrant, utcnow
from app.db.session import Database
from app.demo.bundles import BundleFactory
from app.measurements.services.registry import RunCreate, register_run
from app.settings import Settings
from app.storage import artifact_store, staging
from app.submission_api.services.receiving import next_look_s, run_receive_staged
from app.submission_api.services.transfers import sweep_staging, upload_url
from tests.support.accounts import ACCOUNTS, create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.hostile import pax_digit_run
from tests.support.objectstore import shared_object_store

OCTETS = {"Content-Type": "application/octet-stream"}


@pytest.fixture
def on_s3(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    store = shared_object_store()
    for name, value in store.env.items():
        monkeypatch.setenv(name, value)
    return settings.model_copy(update={"storage_url": store.new_url()})


def _run_without_archive(database: Database, settings: Settings, folder: Path) -> str:
    payload = parse_run_folder(folder)
    with database.session() as session:
        user = user_by_email(session, ACCOUNTS["submitter"][0])
        assert user is not None
        run = register_run(session=session, settings=settings, who=principal_of_user(user),
                           payload=RunCreate.model_validate(payload), now=utcnow())  # fmt: skip
        session.commit()
        return run.public_id


def _grant(
    database: Database, settings: Settings, queue: RecordingQueue, run_id: str
) -> tuple[str, int]:
    with database.session() as session:
        signed = upload_url(session=session, settings=settings, queue=queue, subject="run",
                            subject_id=run_id, now=utcnow())  # fmt: skip
        session.commit()
        grant = session.scalars(select(TransferGrant).order_by(TransferGrant.id.desc())).first()
        assert grant is not None and grant.job_id is not None
        return signed.url, grant.job_id


def _look(
    database: Database, settings: Settings, queue: RecordingQueue, job_id: int
) -> TransferGrant:
    with database.session() as session:
        run_receive_staged(session=session, settings=settings, job_id=job_id, queue=queue)
    with database.session() as session:
        grant = session.scalar(select(TransferGrant).where(TransferGrant.job_id == job_id))
        assert grant is not None
        session.expunge(grant)
        return grant


def _archive_of(database: Database, run_id: str) -> str | None:
    with database.session() as session:
        run = session.scalar(select(MeasuredRun).where(MeasuredRun.public_id == run_id))
        assert run is not None
        return None if run.archive is None else run.archive.sha256


def test_a_used_s3_url_takes_nothing_more_and_its_object_is_swept(
    database: Database, on_s3: Settings, tmp_path: Path
) -> None:
    create_accounts(database)
    folder = BundleFactory().run_folders(tmp_path / "runs")[0]
    run_id = _run_without_archive(database, on_s3, folder)
    queue = RecordingQueue()
    url, job_id = _grant(database, on_s3, queue, run_id)
    archive = build_archive(folder, tmp_path / "run.tar.gz").read_bytes()
    assert httpx.put(url, content=archive, headers=OCTETS, timeout=30).status_code == 200
    assert _look(database, on_s3, queue, job_id).outcome == "taken"
    taken = _archive_of(database, run_id)
    assert taken is not None
    # The URL still works at the store until it expires: what it takes is never taken.
    assert httpx.put(url, content=pax_digit_run(), headers=OCTETS, timeout=30).status_code == 200
    assert _look(database, on_s3, queue, job_id).outcome == "taken"
    assert _archive_of(database, run_id) == taken
    store = staging(artifact_store(on_s3))
    assert store is not None
    with database.session() as session:
        grant = session.scalar(select(TransferGrant).where(TransferGrant.job_id == job_id))
        assert grant is not None and grant.staging_key is not None
        key = grant.staging_key
        assert store.staged_size(key) is not None
        # Before the URL expires nothing is swept (a PUT may still come); after, it is.
        assert sweep_staging(session, on_s3, utcnow()) == 0
        later = grant.expires_at + dt.timedelta(seconds=1)
        assert sweep_staging(session, on_s3, later) == 1
        session.commit()
    assert store.staged_size(key) is None


def test_an_expired_s3_url_is_refused_by_the_store_and_the_watch_ends(
    database: Database, on_s3: Settings, tmp_path: Path
) -> None:
    create_accounts(database)
    folder = BundleFactory().run_folders(tmp_path / "runs")[0]
    brief = on_s3.model_copy(update={"signed_upload_s": 1})
    run_id = _run_without_archive(database, brief, folder)
    queue = RecordingQueue()
    url, job_id = _grant(database, brief, queue, run_id)
    with database.session() as session:
        grant = session.scalar(select(TransferGrant).where(TransferGrant.job_id == job_id))
        assert grant is not None
        expires = grant.expires_at
    while utcnow() <= expires + dt.timedelta(seconds=1):
        time.sleep(0.2)
    archive = build_archive(folder, tmp_path / "run.tar.gz").read_bytes()
    assert httpx.put(url, content=archive, headers=OCTETS, timeout=30).status_code == 403
    assert _look(database, brief, queue, job_id).outcome == "expired, nothing arrived"
    assert _archive_of(database, run_id) is None


def test_a_fresh_grant_is_looked_at_soon_and_an_old_one_every_interval(settings: Settings) -> None:
    """A client uploads as soon as it has the URL: the first looks come within a fraction
    of a second (each was two seconds away, a wait the CLI showed on every run), later
    ones every configured interval."""
    created = dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)
    grant = TransferGrant(created_at=created)
    looks = [
        next_look_s(settings, grant, created + dt.timedelta(seconds=s)) for s in (0, 0.5, 1, 3, 60)
    ]
    assert looks == [0.2, 0.25, 0.5, 1.5, settings.staged_upload_poll_s]
