"""A bundle arriving for a submission composed from runs, wherever it came from (the
portal's signed URL, or a staged object a worker took from the store).

The first bundle enters the same intake and checks as a browser or REST upload (one
pipeline, one set of findings), under the id the submission was registered with, with
its publication mode and embargo as registered. A later one (the CLI's ``update`` and
``remove-run`` rebuild the bundle) replaces the archive only when its results are the
submitted ones less the points withdrawn: a submission's results are fixed (rules §8);
its checks then run again and the review goes on. After finalization the same bundle
is a correction of the non-result content that the chair approves (rules §11.7).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from app.accounts.services.accounts import get_user, principal_of_user
from app.audit import change_state
from app.audit import record as timeline
from app.checks.services.checks import retry_check
from app.core.divisions import Scenario, scenario_of
from app.core.lifecycle import PointState, PublicationMode, SubmissionState
from app.core.refusals import Kind, Refused
from app.db.models import ApiSubmission, Submission
from app.jobs.queue import JobQueue
from app.review.services.corrections import file_correction
from app.settings import Settings
from app.submission_api.services.records import (
    embargo_day,
    point_of,
    removed_runs,
    withdraw_point_of,
)
from app.submissions.domain.archive import ArchiveRejected
from app.submissions.domain.bundle import manifest, point_results
from app.submissions.services.extracted import bundle_folder, keep_extraction
from app.submissions.services.intake import (
    IntakeError,
    accept_upload,
    store_archive,
    store_events,
)
from app.submissions.services.points import find_point
from app.submissions.services.reading import ArchiveReading, read_archive
from app.submissions.services.storage import ReceivedFile

# Where a bundle may still be replaced: in its checks, and in review before a decision.
REPLACEABLE = frozenset(
    {
        SubmissionState.RECEIVED,
        SubmissionState.CHECKING,
        SubmissionState.CHECK_ERROR,
        SubmissionState.PASSED_CHECKS,
    }
)


class BundleRefused(Refused):
    pass


def take_bundle(
    *, session: Session, settings: Settings, queue: JobQueue, record: ApiSubmission,
    received: ReceivedFile, now: dt.datetime,
) -> Submission:  # fmt: skip
    """Take *received* as the record's bundle: its first, or one replacing it. Raises the
    refusal (nothing kept); the first bundle's refusal is kept on the record too, which
    then says REJECTED, once the caller commits."""
    if record.withdrawn_at is not None:
        received.path.unlink(missing_ok=True)
        raise BundleRefused("withdrawn", "the submission was withdrawn", Kind.CONFLICT)
    if record.submission is None:
        return _first_bundle(session, settings, queue, record, received)
    return _replacing_bundle(session, settings, queue, record, received, now)


def _first_bundle(
    session: Session, settings: Settings, queue: JobQueue, record: ApiSubmission,
    received: ReceivedFile,
) -> Submission:  # fmt: skip
    try:
        accepted = accept_upload(
            session=session, settings=settings, queue=queue, received=received,
            filename=f"{record.public_id}.tar.gz", for_review=not record.is_test,
            uploader=get_user(session, record.user_id), public_id=record.public_id,
            is_test=record.is_test,
        )  # fmt: skip
    except IntakeError as exc:
        record.refused_code, record.refused_message = exc.code, exc.message
        raise
    if accepted.duplicate:
        raise BundleRefused(
            "archive-stored-already",
            "an archive with exactly these bytes was submitted before; build the bundle "
            "from this submission's runs",
            Kind.CONFLICT,
        )
    submission = accepted.submission
    # Chosen at registration, irrevocable (rules §11.2): as the CLI maps it.
    submission.publication_mode = (
        PublicationMode.PROVISIONAL if record.early_publish else PublicationMode.CONFIDENTIAL
    )
    if record.embargo_at is not None:
        zone = ZoneInfo(settings.cohort_timezone)
        submission.embargo_date = embargo_day(record.embargo_at, zone)
    submission.scenario = (scenario_of(record.scenario) or Scenario.COP).value
    record.submission = submission
    record.refused_code = record.refused_message = None
    return submission


def _hashes(folder: Path) -> dict[str, dict[str, str]]:
    """Each point's result files' sha256, by label."""
    return point_results(manifest(folder))


def _changes(record: ApiSubmission, old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """What makes the new bundle more than the old one less the points withdrawn or whose
    runs were removed."""
    submission = record.submission
    assert submission is not None
    removed = {label for run in removed_runs(record) if (label := point_of(record, run))}
    if added := sorted(set(new) - set(old)):
        return f"the new bundle adds the point {added[0]}: none is added after submission (§8)"
    for label in sorted(set(old) - set(new) - removed):
        point = find_point(submission, label)
        if point is None or point.state != PointState.WITHDRAWN:
            return f"the new bundle leaves out {label}, which is not withdrawn: remove its run"
    changed = sorted(label for label in set(old) & set(new) if old[label] != new[label])
    if changed:
        return f"the point {changed[0]}'s results differ from the submitted ones (rules §8)"
    return None


def _replacing_bundle(
    session: Session, settings: Settings, queue: JobQueue, record: ApiSubmission,
    received: ReceivedFile, now: dt.datetime,
) -> Submission:  # fmt: skip
    submission = record.submission
    assert submission is not None
    if submission.state == SubmissionState.FINALIZED:
        # After finalization a rebuilt bundle is a correction the chair approves (§11.7).
        file_correction(
            session=session, settings=settings, queue=queue, submission=submission,
            who=principal_of_user(record.user), received=received, at=now,
            reason="rebuilt by endpoints-submission-cli",
        )  # fmt: skip
        return submission
    if SubmissionState(submission.state) not in REPLACEABLE:
        received.path.unlink(missing_ok=True)
        raise BundleRefused(
            "bundle-fixed",
            f"the submission is {submission.state}: its bundle can no longer be replaced",
            Kind.CONFLICT,
        )
    try:
        reading = read_archive(settings, received.path, keep_events=True)
    except ArchiveRejected as exc:
        received.path.unlink(missing_ok=True)
        raise BundleRefused(exc.code, exc.message, exc.kind, member=exc.member) from exc
    try:
        differs = _changes(record, _hashes(bundle_folder(settings, submission)),
                           _hashes(reading.folder))  # fmt: skip
        if differs is not None:
            raise BundleRefused("bundle-results-changed", differs, Kind.CONFLICT)
        # The removals this bundle completes: their points are withdrawn (rules §8).
        owner = principal_of_user(record.user)
        for run in removed_runs(record):
            withdraw_point_of(session, settings, owner, record, run, now)
        _swap(session, settings, submission, received, reading)
        keep_extraction(settings, reading.tree, received.sha256)
    finally:
        received.path.unlink(missing_ok=True)
        reading.discard()
    timeline(
        session, submission, action="bundle replaced", actor=record.user.email, at=now,
        reason=f"rebuilt by endpoints-submission-cli, sha256 {received.sha256[:16]}…",
    )  # fmt: skip
    # Checks pending for the new bundle: nothing reads the old one's outcome as its own.
    change_state(session, submission, SubmissionState.CHECKING, action="checks queued",
                 at=now)  # fmt: skip
    retry_check(session=session, queue=queue, submission=submission)
    return submission


def _swap(
    session: Session, settings: Settings, submission: Submission, received: ReceivedFile,
    reading: ArchiveReading,
) -> None:  # fmt: skip
    submission.archive = store_archive(session, settings, received)
    submission.archive_format = reading.format
    submission.bundle_root = reading.root
    submission.bundle_submission_id = reading.submission_dir_name
    submission.content_digest = reading.content_digest
    submission.disclosed = reading.disclosed
    session.flush()
    store_events(session, settings, submission, reading)
