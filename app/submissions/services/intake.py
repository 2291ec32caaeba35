"""accept_upload: from a finished upload to a stored submission with a queued check."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import record
from app.core.lifecycle import SubmissionState
from app.core.names import slugify
from app.core.refusals import Kind, Refused
from app.db.models import Job, Organization, StoredFile, Submission, User
from app.jobs.queue import CHECK_SUBMISSION, JobQueue, enqueue_after_commit
from app.settings import Settings
from app.storage import StorageError, archive_key, artifact_store
from app.submissions.domain.archive import ArchiveRejected, extract_archive
from app.submissions.domain.bundle import (
    BundleLayout,
    LayoutRejected,
    content_digest,
    declared_organisation,
    locate_submission,
)
from app.submissions.services.archives import store_unavailable
from app.submissions.services.artifacts import take_bundle_events
from app.submissions.services.extracted import archive_limits, keep_extraction, staging_folder
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


def _organisation(session: Session, name: str) -> Organization:
    slug = slugify(name)
    org = session.scalar(select(Organization).where(Organization.slug == slug))
    if org is None:
        org = Organization(slug=slug, name=name)
        session.add(org)
        session.flush()
    return org


def _same_organisation(organisation: Organization, declared: str) -> None:
    names = {slugify(n) for n in declared.split(",") if n.strip()}
    if organisation.slug not in names:
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


def _relative(root: Path, extraction: Path) -> str:
    """Where the submission's folder is inside the extracted archive ("" at its top)."""
    inner = root.relative_to(extraction).as_posix()
    return "" if inner == "." else inner


def _submitting_for(session: Session, layout: BundleLayout, uploader: User | None) -> Organization:
    """The organisation the bundle names (its system description, else its folder): the
    uploader's own, which the bundle must name too, or one made for it."""
    org_name = declared_organisation(layout.root) or layout.organisation or "unknown"
    if uploader is not None and uploader.organization is not None:
        _same_organisation(uploader.organization, org_name)
        return uploader.organization
    return _organisation(session, org_name)


def accept_upload(
    *,
    session: Session,
    settings: Settings,
    queue: JobQueue,
    received: ReceivedFile,
    filename: str,
    for_review: bool,
    uploader: User | None = None,
) -> AcceptedUpload:
    """Store *received* (already hashed, in the data dir's tmp) as a new submission.

    The same archive bytes uploaded again return the existing submission (the web layer
    shows it only to a caller who may see it). Anything that is refused leaves nothing
    behind: no blob, no extracted files, no rows.
    An uploader with an organisation submits for it, and the bundle must say the same.
    """
    existing = session.scalar(
        select(Submission)
        .join(StoredFile, Submission.archive_id == StoredFile.id)
        .where(StoredFile.sha256 == received.sha256)
        .order_by(Submission.id)
    )
    if existing is not None:
        received.path.unlink(missing_ok=True)
        return AcceptedUpload(existing, duplicate=True)

    extract_dir = staging_folder(settings)
    try:
        extracted = extract_archive(received.path, extract_dir, archive_limits(settings))
        layout = locate_submission(extracted.root)
    except ArchiveRejected as exc:
        received.path.unlink(missing_ok=True)
        raise IntakeError(exc.code, exc.message, exc.kind, exc.member) from exc
    except LayoutRejected as exc:
        received.path.unlink(missing_ok=True)
        shutil.rmtree(extract_dir, ignore_errors=True)
        raise IntakeError(exc.code, exc.message) from exc

    try:
        organisation = _submitting_for(session, layout, uploader)
        stored = session.scalar(select(StoredFile).where(StoredFile.sha256 == received.sha256))
        if stored is None:
            stored = StoredFile(sha256=received.sha256, size=received.size, kind="archive")
            session.add(stored)
        _store(
            lambda: artifact_store(settings).put_file(archive_key(received.sha256), received.path)
        )
        submission = Submission(
            organization=organisation,
            archive=stored,
            archive_format=extracted.format,
            original_filename=Path(filename).name[:255] or "upload",
            bundle_submission_id=layout.submission_dir_name,
            bundle_root=_relative(layout.root, extract_dir),
            content_digest=content_digest(layout.root),
            state=SubmissionState.RECEIVED.value,
            for_review=for_review,
            submitted_by=uploader,
        )
        session.add(submission)
        session.flush()
        _store(lambda: take_bundle_events(session, settings, submission, layout.root))
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
    except BaseException:
        received.path.unlink(missing_ok=True)
        shutil.rmtree(extract_dir, ignore_errors=True)
        raise
    keep_extraction(settings, extract_dir, received.sha256)
    return AcceptedUpload(submission, duplicate=False)
