"""accept_upload and run_checks against a real (migrated) SQLite database."""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.checks.services.checks import fail_check, retry_check
from app.core.lifecycle import JobState, SubmissionState
from app.core.refusals import Kind
from app.db.models import CheckRun, FindingRow, Job, Point, StoredFile, Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory
from app.jobs.recovery import recover_jobs
from app.pipeline import JOB_KINDS, run_checks
from app.settings import Settings
from app.storage.base import archive_key
from app.submissions.services.extracted import bundle_folder
from app.submissions.services.intake import IntakeError, accept_upload
from app.submissions.services.storage import receive_local
from tests.support.bundles import tar_bytes
from tests.support.fakes import RecordingQueue
from tests.support.rows import must
from tests.support.submissions import accept

# PostgreSQL too: duplicates are refused by the database's unique constraints.
pytestmark = pytest.mark.postgresql

IN_TIME = dt.datetime(2026, 11, 30, 20, 0, tzinfo=dt.UTC)


def _count(database: Database, model: type) -> int:
    with database.session() as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def test_accepted_upload_is_stored_and_its_job_sent_after_commit(
    database: Database, settings: Settings, queue: RecordingQueue, good_archive: Path
) -> None:
    with database.session() as session:
        accepted = accept_upload(
            session=session,
            settings=settings,
            queue=queue,
            received=receive_local(good_archive, settings.tmp_dir, settings.max_upload_bytes),
            filename="good.tar.gz",
            for_review=True,
        )
        assert queue.sent == []  # nothing is sent before the transaction commits
        session.commit()
        job = session.scalars(select(Job)).one()
        assert queue.sent == [(job.id, "check_submission")]
        sub = accepted.submission
        assert sub.state == "received" and sub.organization.name == "Acme Corp"
        assert sub.bundle_submission_id == "sub-0001"
        blob = settings.blobs_dir / sub.archive.sha256[:2] / sub.archive.sha256
        assert blob.read_bytes() == good_archive.read_bytes()
        assert (bundle_folder(settings, sub) / "results").is_dir()
    assert list(settings.tmp_dir.iterdir()) == []  # the temporary upload was moved, not copied


def test_rollback_sends_nothing(
    database: Database, settings: Settings, queue: RecordingQueue, good_archive: Path
) -> None:
    with database.session() as session:
        accept_upload(
            session=session,
            settings=settings,
            queue=queue,
            received=receive_local(good_archive, settings.tmp_dir, settings.max_upload_bytes),
            filename="g",
            for_review=True,
        )
        session.rollback()
    assert queue.sent == []
    assert _count(database, Submission) == 0


def test_same_archive_twice_is_recognised(
    database: Database, settings: Settings, queue: RecordingQueue, good_archive: Path
) -> None:
    first, dup1 = accept(database, settings, queue, good_archive)
    second, dup2 = accept(database, settings, queue, good_archive)
    assert (dup1, dup2) == (False, True)
    assert first == second
    assert _count(database, Submission) == 1 and _count(database, StoredFile) == 1
    assert len(queue.sent) == 1


def test_hostile_archive_leaves_nothing_behind(
    database: Database, settings: Settings, queue: RecordingQueue, tmp_path: Path
) -> None:
    import tarfile

    first, _ = accept(database, settings, queue, BundleFactory().archive(tmp_path / "ok.tar.gz"))
    evil = tmp_path / "evil.tar.gz"
    link = tarfile.TarInfo("org/sub/results")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc"
    evil.write_bytes(tar_bytes([(link, None)]))
    bundles_before = sorted(settings.bundles_dir.iterdir())
    with pytest.raises(IntakeError) as error:
        accept(database, settings, queue, evil)
    assert error.value.code == "symlink" and error.value.kind == Kind.INVALID
    assert _count(database, Submission) == 1 and _count(database, StoredFile) == 1
    assert sorted(settings.bundles_dir.iterdir()) == bundles_before
    assert list(settings.tmp_dir.iterdir()) == []
    # Nothing of the refused archive is stored (another archive may share its folder).
    evil_key = archive_key(hashlib.sha256(evil.read_bytes()).hexdigest())
    assert not (settings.blobs_dir / evil_key).exists()


def test_archive_without_a_submission_is_refused(
    database: Database, settings: Settings, queue: RecordingQueue, tmp_path: Path
) -> None:
    import tarfile

    archive = tmp_path / "random.tar.gz"
    archive.write_bytes(tar_bytes([(tarfile.TarInfo("photos/cat.jpg"), b"meow")]))
    with pytest.raises(IntakeError) as error:
        accept(database, settings, queue, archive)
    assert error.value.code == "no-submission-root"
    assert list(settings.bundles_dir.iterdir()) == []


def test_checks_pass_store_points_and_findings(
    database: Database, settings: Settings, queue: RecordingQueue, good_archive: Path
) -> None:
    accept(database, settings, queue, good_archive)
    job_id = queue.sent[0][0]
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=job_id, clock=lambda: IN_TIME)
    with database.session() as session:
        sub = session.scalars(select(Submission)).one()
        assert (sub.state, sub.verdict, sub.checker_version) == (
            "passed_checks",
            "passed",
            "1.5.3.0",
        )
        assert (sub.target_cohort, sub.eligible_cohort) == ("2026-12-C0", "2026-12-C0")
        job = must(session.get(Job, job_id))
        assert (job.state, job.progress, job.attempts) == ("succeeded", 1.0, 1)
        points = session.scalars(select(Point).order_by(Point.concurrency)).all()
        assert [p.concurrency for p in points] == [1, 8, 16, 64, 128, 512, 1024, 13368]
        assert points[-1].offline_kind == "dedicated" and points[0].region == "low_latency"
        assert all(p.system_tps_per_kw and p.tps_per_user for p in points)
        run = session.scalars(select(CheckRun)).one()
        assert run.error_count == 0 and len(run.findings) > 250
        assert {f.rule for f in run.findings} >= {
            "duplicate-upload",
            "target-cohort-cutoff",
            "point-count",
        }


def test_rejected_bundle_and_not_for_review(
    database: Database, settings: Settings, queue: RecordingQueue, bad_archive: Path
) -> None:
    accept(database, settings, queue, bad_archive, for_review=False)
    with database.session() as session:
        run_checks(
            session=session, settings=settings, job_id=queue.sent[0][0], clock=lambda: IN_TIME
        )
        sub = session.scalars(select(Submission)).one()
        assert (sub.state, sub.verdict, sub.for_review) == ("rejected", "rejected", False)
        assert sub.eligible_cohort is None
        errors = session.scalars(
            select(FindingRow.rule).where(FindingRow.severity == "error")
        ).all()
        assert set(errors) == {"metric-consistency-system-tps", "seed-runtime-match"}


def test_running_a_job_again_is_a_no_op_and_a_redelivery_replaces(
    database: Database, settings: Settings, queue: RecordingQueue, good_archive: Path
) -> None:
    accept(database, settings, queue, good_archive)
    job_id = queue.sent[0][0]
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=job_id, clock=lambda: IN_TIME)
        run_checks(session=session, settings=settings, job_id=job_id, clock=lambda: IN_TIME)
    assert _count(database, CheckRun) == 1 and _count(database, Point) == 8
    # The message comes back while the job is "running". A worker still beating owns it:
    # the copy leaves it alone, so it never runs twice at once.
    with database.session() as session:
        job = must(session.get(Job, job_id))
        job.state = JobState.RUNNING
        job.heartbeat_at = IN_TIME
        must(job.submission).state = SubmissionState.CHECKING
        session.commit()
        run_checks(session=session, settings=settings, job_id=job_id, clock=lambda: IN_TIME)
        assert must(session.get(Job, job_id)).attempts == 1 and job.state == "running"
        # The worker died (silent for longer than the stale limit): the copy takes over.
        later = IN_TIME + dt.timedelta(seconds=settings.job_stale_after_s + 1)
        run_checks(session=session, settings=settings, job_id=job_id, clock=lambda: later)
        assert must(session.get(Job, job_id)).attempts == 2
    assert _count(database, Point) == 8  # replaced, not duplicated
    with database.session() as session:
        assert session.scalars(select(Submission.state)).one() == "passed_checks"


def test_a_check_of_a_bundle_replaced_while_it_ran_keeps_no_outcome(
    database: Database, settings: Settings, queue: RecordingQueue, good_archive: Path,
    bad_archive: Path,
) -> None:  # fmt: skip
    """The bundle is replaced (the official CLI's rebuilt one) while its check runs: what
    that check found is of a bundle the submission no longer has, so nothing of it is
    kept; the check the replacement queued decides."""
    from app.checks.services.checks import check_submission
    from app.submissions.services.intake import store_archive

    accept(database, settings, queue, good_archive)
    job_id = queue.sent[0][0]

    def replaced_meanwhile(session, submission, root, result):  # type: ignore[no-untyped-def]
        received = receive_local(bad_archive, settings.tmp_dir, settings.max_upload_bytes)
        submission.archive = store_archive(session, settings, received)
        session.flush()
        return []

    with database.session() as session:
        check_submission(session=session, settings=settings, job_id=job_id,
                         clock=lambda: IN_TIME, bundle_folder=bundle_folder,
                         more_findings=replaced_meanwhile)  # fmt: skip
        assert must(session.get(Job, job_id)).state == "succeeded"
        assert session.scalars(select(Submission.state)).one() == "checking"
    assert _count(database, CheckRun) == 0 and _count(database, Point) == 0


def test_a_host_without_the_extracted_bundle_extracts_it_from_the_store(
    database: Database, settings: Settings, queue: RecordingQueue, good_archive: Path
) -> None:
    sub_id, _ = accept(database, settings, queue, good_archive)
    shutil.rmtree(settings.bundles_dir)  # a worker on another host, or a cleared cache
    with database.session() as session:
        run_checks(
            session=session, settings=settings, job_id=queue.sent[0][0], clock=lambda: IN_TIME
        )
        sub = must(session.get(Submission, sub_id))
        assert sub.state == "passed_checks"
        assert (settings.bundles_dir / sub.archive.sha256 / sub.bundle_root).is_dir()


@pytest.mark.parametrize("damage", ["deleted", "corrupted"])
def test_an_archive_gone_from_the_store_is_a_check_error_with_a_reason_and_can_be_retried(
    database: Database,
    settings: Settings,
    queue: RecordingQueue,
    good_archive: Path,
    damage: str,
) -> None:
    sub_id, _ = accept(database, settings, queue, good_archive)
    shutil.rmtree(settings.bundles_dir)
    with database.session() as session:
        sub = must(session.get(Submission, sub_id))
        blob = settings.blobs_dir / sub.archive.sha256[:2] / sub.archive.sha256
        if damage == "deleted":
            blob.unlink()
        else:
            blob.write_bytes(blob.read_bytes()[:-10] + b"0123456789")
        run_checks(
            session=session, settings=settings, job_id=queue.sent[0][0], clock=lambda: IN_TIME
        )
        assert sub.state == "check_error"
        # The submitter is told what is wrong; where the store keeps it is the operator's.
        message = sub.error_message or ""
        assert message == "the stored archive is missing or damaged; the operator has been told"
        assert str(settings.blobs_dir) not in message
        assert not settings.bundles_dir.is_dir() or not any(settings.bundles_dir.iterdir())
        retry = retry_check(session=session, queue=queue, submission=sub)
        session.commit()
        assert queue.sent[-1] == (retry.id, "check_submission")


def test_lost_jobs_are_resent_then_given_up(
    database: Database, settings: Settings, queue: RecordingQueue, good_archive: Path
) -> None:
    accept(database, settings, queue, good_archive)
    job_id = queue.sent[0][0]
    later = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=settings.job_stale_after_s + 5)
    with database.session() as session:
        assert recover_jobs(
            session=session, settings=settings, queue=queue, kinds=JOB_KINDS, clock=lambda: later
        ) == [job_id]
    assert queue.sent[-1] == (job_id, "check_submission")
    with database.session() as session:
        job = must(session.get(Job, job_id))
        job.state, job.attempts = JobState.RUNNING, settings.job_max_attempts
        job.heartbeat_at = later
        must(job.submission).state = SubmissionState.CHECKING
        session.commit()
        much_later = later + dt.timedelta(seconds=settings.job_stale_after_s + 5)
        assert (
            recover_jobs(
                session=session,
                settings=settings,
                queue=queue,
                kinds=JOB_KINDS,
                clock=lambda: much_later,
            )
            == []
        )
        job = must(session.get(Job, job_id))
        assert job.state == "failed" and "attempts" in (job.error or "")
        assert must(job.submission).state == "check_error"


def test_fail_check_from_received(
    database: Database, settings: Settings, queue: RecordingQueue, good_archive: Path
) -> None:
    accept(database, settings, queue, good_archive)
    with database.session() as session:
        job = must(session.get(Job, queue.sent[0][0]))
        fail_check(session=session, job=job, reason="boom")
        assert (job.state, must(job.submission).state, must(job.submission).error_message) == (
            "failed",
            "check_error",
            "boom",
        )
