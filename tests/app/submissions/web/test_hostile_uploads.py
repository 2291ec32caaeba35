"""Hostile archives (the corpus of issue 44) sent over real HTTP: each is refused with
its code and nothing is stored, and the web process answers other requests while an
archive is being read, for it is read by a child process, never by the web process."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from app.db.models import StoredFile, Submission
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from app.submissions.domain.reader import CHILD_NAME
from tests.support import hostile
from tests.support.accounts import bearer, create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.http import process_state, served, wait_for_descendant
from tests.support.services import migrated_sqlite

CORPUS = {
    "pax-digit-run.tar.gz": (hostile.pax_digit_run, "bad-tar-header", 422),
    "pax-digit-value.tar.gz": (hostile.pax_digits_in_a_value, "bad-tar-header", 422),
    "chained-headers.tar.gz": (hostile.chained_extensions, "bad-tar-header", 422),
    "sparse.tar.gz": (hostile.gnu_sparse, "special-file", 422),
    "long-name.tar.gz": (hostile.gnu_long_name, "bad-tar-header", 422),
    "300001-entries.zip": (hostile.zip_of_many, "too-many-members", 413),
    "overlap.zip": (hostile.zip_overlap, "overlapping-members", 422),
    "long-component.zip": (hostile.zip_long_component, "bad-name", 422),
}


@dataclass
class Served:
    url: str
    token: str
    settings: Settings
    database: Database

    def upload(self, name: str, data: bytes) -> httpx.Response:
        return httpx.post(
            f"{self.url}/api/v1/submissions",
            files={"file": (name, data)},
            headers=bearer(self.token),
            timeout=120,
        )

    def stored(self) -> tuple[int, int]:
        with self.database.session() as session:
            subs = session.scalar(select(func.count()).select_from(Submission)) or 0
            blobs = session.scalar(select(func.count()).select_from(StoredFile)) or 0
        return subs, blobs


@pytest.fixture
def portal(tmp_path: Path) -> Iterator[Served]:
    settings = Settings(
        data_dir=tmp_path / "data", database_url=None, redis_url=None,
        storage_cache_dir=tmp_path / "cache",
    )  # fmt: skip
    migrated_sqlite(settings.data_dir)
    database = Database(settings.effective_database_url)
    tokens = create_accounts(database)
    with served(create_app(settings, queue=RecordingQueue()), settings) as url:
        yield Served(url, tokens["submitter"], settings, database)
    database.dispose()


def _nothing_left(portal: Served) -> None:
    assert portal.stored() == (0, 0)
    tmp = portal.settings.tmp_dir
    assert not tmp.exists() or list(tmp.iterdir()) == []
    blobs = portal.settings.blobs_dir
    assert not blobs.exists() or not [p for p in blobs.rglob("*") if p.is_file()]
    bundles = portal.settings.bundles_dir
    assert not bundles.exists() or list(bundles.iterdir()) == []


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_each_hostile_archive_is_refused_with_its_code_and_nothing_is_stored(
    portal: Served, name: str
) -> None:
    make, code, status = CORPUS[name]
    answer = portal.upload(name, make())
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["code"] == code
    # The refusal names what is wrong, never where the server keeps things.
    assert str(portal.settings.data_dir) not in error["message"]
    assert "cache" not in error["message"] and "/tmp" not in error["message"]
    _nothing_left(portal)


def test_healthz_is_answered_while_an_archive_is_still_being_read(
    portal: Served, tmp_path: Path
) -> None:
    """By order of events, not by a time limit: the reading child is found and frozen
    mid-read; the web process answers /healthz while it stays frozen; then it goes on,
    and the upload is taken."""
    data = hostile.large_archive().read_bytes()
    answers: dict[str, httpx.Response] = {}
    upload = threading.Thread(
        target=lambda: answers.update(upload=portal.upload("large.tar.gz", data))
    )
    upload.start()
    reader = wait_for_descendant(CHILD_NAME)
    os.kill(reader, signal.SIGSTOP)
    try:
        health = httpx.get(f"{portal.url}/healthz", timeout=30)
        assert health.status_code == 200
        assert process_state(reader) == "T"  # still mid-read when /healthz was answered
        assert "upload" not in answers
    finally:
        os.kill(reader, signal.SIGCONT)
    upload.join(timeout=120)
    assert answers["upload"].status_code == 201, answers["upload"].text
