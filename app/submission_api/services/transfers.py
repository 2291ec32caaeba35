"""Signed URLs: where the official CLI PUTs an archive and GETs one back, without an API
key (the signature is in the URL).

With an S3-compatible store the URLs are the store's own presigned ones: an upload goes to
a staging object unique to its grant (a worker job watches for it until the grant
expires, then reads it and takes it to its content address), a download is the stored
object itself, so archives never pass through the web process. On the local store the
URLs are the portal's: ``/submission-api/uploads/<grant>`` and
``/submission-api/downloads/<sha256>/<name>``, each with an expiry and an HMAC of the
portal's secret over everything it names. An upload URL works once; any URL is useless
after its expiry and for any other object.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.core.refusals import Kind, Refused
from app.db.models import Job, TransferGrant
from app.jobs.queue import JobQueue, enqueue_after_commit
from app.keys import derived_key
from app.settings import Settings
from app.storage import StorageError, archive_key, artifact_store, staging

RECEIVE_STAGED = "receive_staged"
_FILENAME = re.compile(r"[A-Za-z0-9._-]{1,120}")


class TransferRefused(Refused):
    pass


@dataclass(frozen=True)
class SignedURL:
    """What the API answers for a signed URL (``expires_in``: seconds)."""

    url: str
    expires_in: int


def _signature(settings: Settings, *parts: str) -> str:
    key = derived_key(settings, "signed-urls")
    return hmac.new(key, ":".join(parts).encode(), hashlib.sha256).hexdigest()


def _stamp(at: dt.datetime) -> str:
    return str(int(at.timestamp()))


def upload_url(
    *,
    session: Session,
    settings: Settings,
    queue: JobQueue,
    subject: str,
    subject_id: str,
    now: dt.datetime,
) -> SignedURL:
    """A URL that takes one archive for the run or submission *subject_id*."""
    expires = now + dt.timedelta(seconds=settings.signed_upload_s)
    grant = TransferGrant(
        direction="upload", subject=subject, subject_id=subject_id, expires_at=expires,
        created_at=now,
    )  # fmt: skip
    session.add(grant)
    session.flush()
    store = staging(artifact_store(settings))
    if store is not None:
        grant.staging_key = grant.public_id
        url = store.presigned_upload(grant.public_id, settings.signed_upload_s)
        job = Job(kind=RECEIVE_STAGED)
        session.add(job)
        session.flush()
        grant.job_id = job.id
        enqueue_after_commit(session, queue, job)
    else:
        signed = _signature(settings, "upload", grant.public_id, _stamp(expires))
        url = settings.public_link(
            f"/submission-api/uploads/{grant.public_id}?expires={_stamp(expires)}&signature={signed}"
        )
    return SignedURL(url, settings.signed_upload_s)


def _refused_url(message: str) -> TransferRefused:
    # 403 as the stores answer a bad presigned URL: the CLI reads it as refused access.
    return TransferRefused("bad-signed-url", message, Kind.FORBIDDEN)


def _fresh(expires: str, now: dt.datetime) -> None:
    if not expires.isdigit() or int(expires) < now.timestamp():
        raise _refused_url("the signed URL has expired; ask the API for a new one")


def claim_upload(
    *,
    session: Session,
    settings: Settings,
    grant_id: str,
    expires: str,
    signature: str,
    now: dt.datetime,
) -> TransferGrant:
    """The grant a portal upload URL carries, taken for this upload: refused when the
    signature is not the portal's, the URL expired, or it was used. Commits the claim, so
    that a second PUT to the same URL finds it used whatever becomes of the first."""
    wanted = _signature(settings, "upload", grant_id, expires)
    if not hmac.compare_digest(wanted, signature):
        raise _refused_url("the signed URL's signature does not match")
    _fresh(expires, now)
    taken = session.execute(
        update(TransferGrant)
        .where(
            TransferGrant.public_id == grant_id,
            TransferGrant.direction == "upload",
            TransferGrant.used_at.is_(None),
        )
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    session.commit()
    grant = session.scalar(select(TransferGrant).where(TransferGrant.public_id == grant_id))
    if grant is None or taken.rowcount != 1:  # type: ignore[attr-defined]
        raise TransferRefused(
            "signed-url-used", "this upload URL was used already; ask for a new one", Kind.CONFLICT
        )
    return grant


def download_url(settings: Settings, sha256: str, filename: str, now: dt.datetime) -> SignedURL:
    """A URL that gives the stored archive *sha256* as *filename*, for a short while."""
    if not _FILENAME.fullmatch(filename):
        raise ValueError(f"{filename!r} is not a download name")
    store = staging(artifact_store(settings))
    seconds = settings.signed_download_s
    if store is not None:
        return SignedURL(store.presigned_download(archive_key(sha256), seconds, filename), seconds)
    expires = _stamp(now + dt.timedelta(seconds=seconds))
    signed = _signature(settings, "download", sha256, filename, expires)
    url = settings.public_link(
        f"/submission-api/downloads/{sha256}/{filename}?expires={expires}&signature={signed}"
    )
    return SignedURL(url, seconds)


def check_download(
    settings: Settings, sha256: str, filename: str, expires: str, signature: str, now: dt.datetime
) -> None:
    """Refused unless the portal signed this very download, and not long ago."""
    wanted = _signature(settings, "download", sha256, filename, expires)
    if not hmac.compare_digest(wanted, signature):
        raise _refused_url("the signed URL's signature does not match")
    _fresh(expires, now)


def sweep_staging(session: Session, settings: Settings, now: dt.datetime) -> int:
    """Remove the staging objects of grants whose watch is over and whose URL has expired:
    a second PUT to a used S3 URL (the store takes it until the URL expires) is removed,
    never taken. The number of grants swept; one the store cannot reach waits for the
    next sweep."""
    store = staging(artifact_store(settings))
    if store is None:
        return 0
    over = session.scalars(
        select(TransferGrant).where(
            TransferGrant.staging_key.is_not(None),
            TransferGrant.outcome.is_not(None),
            TransferGrant.expires_at <= now,
        )
    ).all()
    swept = 0
    for grant in over:
        assert grant.staging_key is not None
        try:
            store.delete_staged(grant.staging_key)
        except StorageError:
            continue
        grant.staging_key = None
        swept += 1
    session.flush()
    return swept


def grant_of_job(session: Session, job_id: int) -> TransferGrant | None:
    return session.scalar(select(TransferGrant).where(TransferGrant.job_id == job_id))


def awaiting_upload(session: Session, subject: str, subject_id: str, now: dt.datetime) -> bool:
    """Whether an upload for it may still arrive through the store (a staged grant whose
    watch is not over)."""
    found = session.scalar(
        select(TransferGrant.id)
        .where(
            TransferGrant.subject == subject,
            TransferGrant.subject_id == subject_id,
            TransferGrant.direction == "upload",
            TransferGrant.staging_key.is_not(None),
            TransferGrant.outcome.is_(None),
            TransferGrant.expires_at > now,
        )
        .limit(1)
    )
    return found is not None
