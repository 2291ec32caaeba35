"""A submission's archive, given back exactly as it was uploaded."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass

from app.core.refusals import Kind, Refused
from app.db.models import Submission
from app.settings import Settings
from app.storage import (
    ObjectCorrupt,
    ObjectMissing,
    StorageError,
    archive_key,
    artifact_store,
    verified_stream,
)

log = logging.getLogger(__name__)


class ArchiveUnavailable(Refused):
    """The archive cannot be given now (the store is down) or at all (it is damaged)."""


def store_unavailable(exc: StorageError, consequence: str = "") -> ArchiveUnavailable:
    """The one refusal (503) when the artifact store cannot be reached (or is set up
    wrong): nothing is lost, the same request succeeds once it is back. The store's own
    words (its address, its bucket) go to the operator's log, not to the caller."""
    log.error("the artifact store refused a request: %s", exc)
    return ArchiveUnavailable(
        "storage-unavailable",
        f"the artifact store cannot be reached{consequence}; try again in a while",
        Kind.UNAVAILABLE,
    )


@dataclass(frozen=True)
class ArchiveDownload:
    chunks: Iterator[bytes]
    size: int
    media_type: str
    filename: str  # the bundle's submission id, made safe, and the portal's short id


def archive_download(settings: Settings, submission: Submission) -> ArchiveDownload:
    """The stored archive, checked against its hash before a byte is sent: a deleted or
    corrupted object is reported (and logged for the operator), never served."""
    key = archive_key(submission.archive.sha256)
    store = artifact_store(settings)
    try:
        chunks = verified_stream(store, key)
        size = store.size(key)
    except (ObjectMissing, ObjectCorrupt) as exc:
        log.error("submission %s: its archive cannot be served: %s", submission.public_id, exc)
        raise ArchiveUnavailable(
            "archive-damaged",
            "the stored archive is missing or does not match its hash; the operator has been "
            "told, and nothing was sent",
            Kind.CONFLICT,
        ) from exc
    except StorageError as exc:  # unreachable, or set up wrong
        raise store_unavailable(exc) from exc
    zipped = submission.archive_format == "zip"
    return ArchiveDownload(
        chunks,
        size,
        "application/zip" if zipped else "application/gzip",
        download_name(submission.bundle_submission_id, submission.public_id)
        + (".zip" if zipped else ".tar.gz"),
    )


def download_name(bundle_id: str | None, public_id: str) -> str:
    """What a downloaded archive is called: the bundle's own submission id, as a person
    knows it, with the portal's short id after it. The bundle's id is the bundle's to say,
    so only letters, digits, dots, dashes and underscores of it reach the header."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", bundle_id or "")[:80].strip("-.")
    return f"{safe}-{public_id[:8]}" if safe else public_id
