"""accept_upload: from a finished upload to a stored submission with a queued check.

The archive is read in a child process under the archive budget
(``app.submissions.services.reading``); this module only registers what the child
found. The web process calls it from a worker thread (``app.web.threads``), so its
event loop answers other requests while an archive is read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import organisation_for
from app.audit import record
from app.core.lifecycle import SubmissionState
from app.core.names import organisation_key
from app.core.refusals import Kind, Refused
from app.db.models import Job, Organization, StoredFile, Submission, User
from app.jobs.queue import CHECK_SUBMISSION, JobQueue, enqueue_after_commit
from app.settings import Settings
from app.storage import StorageError, archive_key, artifact_store, events_key
from app.submissions.domain.archive import ArchiveRejected
from app.submissions.services.archives import store_unavailable
from app.submissions.services.artifacts import StoredEvents, register_events
from app.submissions.services.extracted import keep_extraction
from app.submissions.services.reading import ArchiveReading, read_archive
from app.submissions.services.storage import ReceivedFile


class IntakeError(Refused):
    """An upload refused with a client error; ``member`` names the archive member."""

    def __init__(
        self, code: str, message: str, kind: Kind | None = None, member: str | None = None
    ) -> None:
        super().__init__(code, message, kind, member=member)
        self.member = member


@dataclass(frozen=True)
class AcceptedUpload:
    submission: Submission
    duplicate: bool  # the very same archive was uploaded before: nothing new was stored


def same_organisation(organisation: Organization, declared: str) -> None:
    names = {organisation_key(n) for n in declared.split(",") if n.strip()}
    if organisation.name_key not in names:
        raise IntakeError(
            "organisation-mismatch",
            f"the bundle's system_desc.json names the submitter {declared!r}, but you submit "
            f"for {organisation.name!r}",
            member="submitter_org_names",
        )


def _store(put: Callable[[], object]) -> None:
    """Write to the artifact store; a store that cannot be reached refuses the upload
    (503) and, the transaction rolled back, no submission is left without its archive."""
    try:
        put()
    except StorageError as exc:  # down, or set up wrong: either way not the bundle's fault
        # Not a rule of the bundle's (IntakeError): the same upload is taken once it is back.
        raise store_unavailable(exc, ", so nothing was recorded") from exc


def _submitting_for(
    session: Session, reading: ArchiveReading, uploader: User | None
) -> Organization:
    """The organisation the bundle names (its system description, else its folder): the
    uploader's own, which the bundle must name too, or one made for it."""
    org_name = reading.declared_organisation or reading.organisation or "unknown"
    if uploader is not None and uploader.organization is not None:
        same_organisation(uploader.organization, org_name)
        return uploader.organization
    return organisation_for(session, org_name)


def store_events(
    session: Session, settings: Settings, submission: Submission, reading: ArchiveReading
) -> None:
    """The events the bundle's points carry, compressed by the reader, at their content
    address, each with its row (a store out of reach refuses, nothing recorded)."""
    _store(lambda: _put_events(session, settings, submission, reading))


def _put_events(
    session: Session, settings: Settings, submission: Submission, reading: ArchiveReading
) -> None:
    store = artifact_store(settings)
    for events in reading.events:
        store.put_file(events_key(events.sha256), events.path)
        stored = StoredEvents(events.sha256, events.size, events.stored_size)
        register_events(session, submission, events.label, stored, "bundle")


def store_archive(session: Session, settings: Settings, received: ReceivedFile) -> StoredFile:
    """The archive at its content address, with its row (a store out of reach refuses,
    nothing recorded)."""
    stored = session.scalar(select(StoredFile).where(StoredFile.sha256 == received.sha256))
    if stored is None:
        stored = StoredFile(sha256=received.sha256, size=received.size, kind="archive")
        session.add(stored)
    _store(lambda: artifact_store(settings).put_file(archive_key(received.sha256), received.path))
    return stored


def duplicate_of(session: Session, received: ReceivedFile) -> Submission | None:
    """The submission already stored with exactly these bytes, if any."""
    return session.scalar(
        select(Submission)
        .join(StoredFile, Submission.archive_id == StoredFile.id)
        .where(StoredFile.sha256 == received.sha256)
        .order_by(Submission.id)
    )


def accept_upload(
    *,
    session: Session,
    settings: Settings,
    queue: JobQueue,
    received: ReceivedFile,
    filename: str,
    for_review: bool,
    uploader: User | None = None,
    public_id: str | None = None,
    is_test: bool = False,
) -> AcceptedUpload:
    """Store *received* (already hashed, in the data dir's tmp) as a new submission.

    The same archive bytes uploaded again return the existing submission (the web layer
    shows it only to a caller who may see it). Anything that is refused leaves nothing
    behind: no blob, no extracted files, no rows.
    An uploader with an organisation submits for it, and the bundle must say the same.
    *public_id*: the id the submission was registered under (the Submission API's);
    *is_test*: checked, never reviewed nor published.
    """
    existing = duplicate_of(session, received)
    if existing is not None:
        received.path.unlink(missing_ok=True)
        return AcceptedUpload(existing, duplicate=True)
    try:
        reading = read_archive(settings, received.path, keep_events=True)
    except ArchiveRejected as exc:
        received.path.unlink(missing_ok=True)
        raise IntakeError(exc.code, exc.message, exc.kind, exc.member) from exc
    try:
        submission = _register(session, settings, queue, received, reading, filename,
                               for_review, uploader)  # fmt: skip
        if public_id is not None:
            submission.public_id = public_id
        submission.is_test = is_test
        keep_extraction(settings, reading.tree, received.sha256)
    finally:
        received.path.unlink(missing_ok=True)
        reading.discard()
    return AcceptedUpload(submission, duplicate=False)


def _register(
    session: Session,
    settings: Settings,
    queue: JobQueue,
    received: ReceivedFile,
    reading: ArchiveReading,
    filename: str,
    for_review: bool,
    uploader: User | None,
) -> Submission:
    """The rows of a read archive, its blob and its events in the store, its check job
    queued for the commit."""
    organisation = _submitting_for(session, reading, uploader)
    stored = store_archive(session, settings, received)
    submission = Submission(
        organization=organisation,
        archive=stored,
        archive_format=reading.format,
        original_filename=Path(filename).name[:255] or "upload",
        bundle_submission_id=reading.submission_dir_name,
        bundle_root=reading.root,
        content_digest=reading.content_digest,
        disclosed=reading.disclosed,
        state=SubmissionState.RECEIVED.value,
        for_review=for_review,
        submitted_by=uploader,
    )
    session.add(submission)
    session.flush()
    store_events(session, settings, submission, reading)
    record(
        session,
        submission,
        action="uploaded",
        to_state=submission.state,
        reason=f"{submission.original_filename}, sha256 {received.sha256[:16]}…",
    )
    job = Job(kind=CHECK_SUBMISSION, submission=submission)
    session.add(job)
    session.flush()
    enqueue_after_commit(session, queue, job)
    return submission
