"""Run artifacts (``events.jsonl``): streamed in, hashed, gzip-compressed at rest.

They come packed in a bundle's point directories or through the per-point upload
endpoint, which streams hundreds of MB to several GB straight to the data directory with
a size limit. The content hash is of the uncompressed bytes; the same file stored again is
recognised and nothing new is written.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.refusals import Kind, Refused
from app.db.models import RunArtifact, Submission
from app.settings import Settings
from app.storage import artifact_store, events_key
from app.submissions.services.storage import UploadTooLarge

EVENTS = "events"
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class StoredEvents:
    sha256: str
    size: int
    stored_size: int


class EventsSink:
    """Receives an events file chunk by chunk: hashes, counts, compresses, enforces a limit."""

    def __init__(self, settings: Settings) -> None:
        settings.tmp_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=settings.tmp_dir, prefix="events-", suffix=".gz.partial")
        self._raw = os.fdopen(fd, "wb")
        # Level 1: events compress about 5x even so, at a small fraction of level 9's cost.
        self._gzip = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=1, mtime=0)
        self.path = Path(name)
        self._hash = hashlib.sha256()
        self._limit = settings.max_events_bytes
        self._settings = settings
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self._limit:
            raise UploadTooLarge(self._limit)
        self._hash.update(chunk)
        self._gzip.write(chunk)

    def finish(self) -> StoredEvents:
        """Close the file and move it to its content address (once complete)."""
        self._gzip.close()
        self._raw.flush()
        os.fsync(self._raw.fileno())
        self._raw.close()
        sha = self._hash.hexdigest()
        stored_size = self.path.stat().st_size
        try:
            artifact_store(self._settings).put_file(events_key(sha), self.path)
        finally:
            self.path.unlink(missing_ok=True)  # stored, or refused: never left behind
        return StoredEvents(sha, self.size, stored_size)

    def discard(self) -> None:
        try:
            self._gzip.close()
        finally:
            if not self._raw.closed:
                self._raw.close()
            self.path.unlink(missing_ok=True)


def events_path(settings: Settings, sha256: str) -> Path:
    """A local file with the stored events (gzip-compressed) whose content is *sha256*:
    the store's own file, or a worker's cached copy checked against its hash."""
    return artifact_store(settings).local_path(events_key(sha256))


def store_events_file(settings: Settings, source: Path) -> StoredEvents:
    """Store an events file from disk (plain or .gz)."""
    sink = EventsSink(settings)
    opener = gzip.open if source.suffix == ".gz" else open
    try:
        with opener(source, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                sink.write(chunk)
    except BaseException:
        sink.discard()
        raise
    return sink.finish()


def register_events(
    session: Session, submission: Submission, point_label: str, stored: StoredEvents, source: str
) -> tuple[RunArtifact, bool]:
    """The artifact row for *stored*; ``False`` when the very same file was already there."""
    existing = session.scalar(
        select(RunArtifact).where(
            RunArtifact.submission_id == submission.id,
            RunArtifact.point_label == point_label,
            RunArtifact.kind == EVENTS,
            RunArtifact.sha256 == stored.sha256,
        )
    )
    if existing is not None:
        return existing, False
    artifact = RunArtifact(
        submission_id=submission.id,
        point_label=point_label,
        kind=EVENTS,
        sha256=stored.sha256,
        size=stored.size,
        stored_size=stored.stored_size,
        source=source,
    )
    session.add(artifact)
    session.flush()
    return artifact, True


def events_files(session: Session, submission: Submission, point_label: str) -> int:
    """How many distinct events files the point has."""
    return (
        session.scalar(
            select(func.count())
            .select_from(RunArtifact)
            .where(
                RunArtifact.submission_id == submission.id,
                RunArtifact.point_label == point_label,
                RunArtifact.kind == EVENTS,
            )
        )
        or 0
    )


def events_quota_refusal(settings: Settings, point_label: str, files: int) -> Refused | None:
    """Why a point may not have *files* events files (at most
    ``ENDPOINTS_PORTAL_EVENTS_FILES_PER_POINT``); None when it may."""
    limit = settings.events_files_per_point
    if files <= limit:
        return None
    return Refused(
        "events-quota",
        f"the point {point_label} has {limit} events files already, as many as a point may "
        "have; the newest is the one re-counted",
        Kind.CONFLICT,
    )


def latest_events(session: Session, submission: Submission) -> dict[str, RunArtifact]:
    """The newest events artifact of each point."""
    rows = session.scalars(
        select(RunArtifact)
        .where(RunArtifact.submission_id == submission.id, RunArtifact.kind == EVENTS)
        .order_by(RunArtifact.id)
    ).all()
    return {row.point_label: row for row in rows}
