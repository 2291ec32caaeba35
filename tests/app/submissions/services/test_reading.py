"""Archives are read in a child process under a budget: what it finds is what the
portal's own readers find, and past its budget it is stopped and nothing is kept."""

from __future__ import annotations

import gzip
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from app.core.lifecycle import JobState, SubmissionState
from app.db.models import Job, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, CurveSpec
from app.pipeline import run_checks
from app.settings import Settings
from app.submissions.domain.archive import ArchiveLimits, ArchiveRejected, extract_archive
from app.submissions.domain.bundle import content_digest
from app.submissions.domain.reader import CHILD_NAME
from app.submissions.services.reading import Budget, read_archive, work_in_child
from tests.support import hostile
from tests.support.fakes import RecordingQueue
from tests.support.http import parent_of
from tests.support.readers import WHO_AM_I
from tests.support.submissions import accept

EVENTS = BundleFactory(curves=(CurveSpec(events_at=8),))
# A budget no reading of the large archive below fits in.
ONE_SECOND = Budget(cpu_s=1, memory_bytes=1024**3, file_bytes=2**31, wall_s=60)


@pytest.fixture
def large_archive() -> Path:
    """A legal archive of 600 MiB expanded: more than a second of any core's time (one
    for the whole run)."""
    return hostile.large_archive()


def _leftovers(settings: Settings) -> list[Path]:
    return list(settings.bundles_dir.iterdir()) if settings.bundles_dir.exists() else []


def test_the_child_reads_what_the_portal_needs_of_a_bundle(
    settings: Settings, tmp_path: Path
) -> None:
    archive = EVENTS.archive(tmp_path / "good.tar.gz")
    reading = read_archive(settings, archive, keep_events=True)
    try:
        assert reading.root == "Acme_Corp/sub-0001"
        assert reading.organisation == "Acme_Corp"
        assert reading.declared_organisation == "Acme Corp"
        assert reading.format == "tar.gz"
        # The events leave the tree, compressed and hashed as uploaded.
        assert reading.events and not list(reading.folder.rglob("events.jsonl*"))
        first = reading.events[0]
        assert first.label.count("/") == 2 and first.path.is_file()
        assert len(gzip.decompress(first.path.read_bytes())) == first.size
        assert (reading.folder / "results").is_dir()
    finally:
        reading.discard()
    assert _leftovers(settings) == []


def test_the_digest_is_over_the_bundle_as_uploaded(settings: Settings, tmp_path: Path) -> None:
    archive = EVENTS.archive(tmp_path / "good.tar.gz")
    tree = extract_archive(archive, tmp_path / "tree", ArchiveLimits()).root
    reading = read_archive(settings, archive, keep_events=False)
    try:
        assert reading.content_digest == content_digest(tree / reading.root)
    finally:
        reading.discard()


@pytest.mark.parametrize(
    ("budget", "said"),
    [
        (ONE_SECOND, "1 s of processor time"),
        (Budget(cpu_s=100, memory_bytes=1024**3, file_bytes=2**31, wall_s=0.05), "0.05 s"),
        (Budget(cpu_s=100, memory_bytes=24 * 1024**2, file_bytes=2**31, wall_s=60), "memory"),
    ],
    ids=["cpu", "wall-clock", "memory"],
)
def test_a_reading_past_its_budget_is_stopped_and_leaves_nothing(
    settings: Settings, large_archive: Path, budget: Budget, said: str
) -> None:
    archive = large_archive
    with pytest.raises(ArchiveRejected) as refused:
        read_archive(settings, archive, keep_events=True, budget=budget)
    assert refused.value.code == "archive-budget"
    assert said in refused.value.message
    assert _leftovers(settings) == []


def test_the_large_block_is_a_legal_archive_read_within_the_default_budget(
    settings: Settings, tmp_path: Path
) -> None:
    archive = tmp_path / "large.tar.gz"
    archive.write_bytes(hostile.large_block(128 * 1024**2))
    reading = read_archive(settings, archive, keep_events=True)
    assert (reading.folder / "results/big.txt").stat().st_size == 128 * 1024**2
    reading.discard()


def test_a_check_whose_archive_outgrew_the_budget_fails_once_and_is_not_run_again(
    database: Database, settings: Settings, queue: RecordingQueue, tmp_path: Path
) -> None:
    """A worker that must extract a stored archive again reads it under the budget: past
    it the check fails with the reason, the job is over (never redelivered), and the
    worker process itself goes on."""
    archive = BundleFactory().archive(tmp_path / "good.tar.gz")
    submission_id, _ = accept(database, settings, queue, archive)
    for cached in _leftovers(settings):  # this host's copy is gone: it must read again
        shutil.rmtree(cached)
    # A deadline no reading meets: 0.05 s was met once the bundle's YAML read faster.
    tight = settings.model_copy(update={"archive_wall_s": 1e-6})
    job_id = queue.sent[0][0]
    with database.session() as session:
        run_checks(session=session, settings=tight, job_id=job_id)
        run_checks(session=session, settings=tight, job_id=job_id)  # a redelivery
        job = session.get(Job, job_id)
        submission = session.get(Submission, submission_id)
        assert job is not None and submission is not None
        assert job.state == JobState.FAILED and job.attempts == 1
        assert "budget" in (job.error or "")
        assert submission.state == SubmissionState.CHECK_ERROR
        assert session.scalars(select(Job)).all() == [job]


def test_each_reading_is_a_fresh_child_of_one_server_which_comes_back_if_it_dies(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The children are forked from a server of this process's own: each a process and
    a session of its own, in the caller's folder; a server that died is replaced."""
    monkeypatch.chdir(tmp_path)  # the folder travels with each request

    def child() -> dict[str, Any]:
        reading = work_in_child(settings, WHO_AM_I, {})
        reading.discard()
        return reading.facts

    first, second = child(), child()
    server = first["parent"]
    assert second["parent"] == server and parent_of(server) == os.getpid()
    assert first["pid"] != second["pid"]
    for seen in (first, second):
        assert seen["session"] == seen["pid"]  # never the caller's signals
        assert seen["name"] == CHILD_NAME and seen["cwd"] == str(tmp_path)

    os.kill(server, signal.SIGKILL)
    third = child()
    assert third["parent"] != server and parent_of(third["parent"]) == os.getpid()
