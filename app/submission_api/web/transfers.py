"""The portal's own signed URLs (the local store; with S3 the store's presigned URLs are
used instead): one PUT of an archive per upload URL, and a short-lived GET of a stored
one. No API key travels: the signature in the URL is the authority, for the one object
it names, until it expires."""

from __future__ import annotations

import datetime as dt
import re

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response
from sqlalchemy.orm import Session

from app.core.refusals import Kind, Refused
from app.db.models import TransferGrant
from app.jobs.queue import JobQueue
from app.settings import Settings
from app.storage import StorageError, archive_key, artifact_store, verified_stream
from app.submission_api.services.receiving import keep_refusal, receive
from app.submission_api.services.transfers import check_download, claim_upload
from app.submissions.services.archives import store_unavailable
from app.submissions.services.storage import ReceivedFile, UploadSink, UploadTooLarge
from app.web.api_errors import error_response, refused
from app.web.deps import NowDep, QueueDep, SessionDep, SettingsDep
from app.web.files import download_response
from app.web.threads import in_thread

router = APIRouter(prefix="/submission-api", include_in_schema=False)
_SHA256 = re.compile(r"[0-9a-f]{64}")


async def _received(request: Request, settings: Settings) -> ReceivedFile:
    """The request's body, streamed to a temporary file, hashed as it comes."""
    sink = UploadSink(settings.tmp_dir, settings.max_upload_bytes)
    try:
        async for chunk in request.stream():
            await in_thread(sink.write, chunk)
    except UploadTooLarge as exc:
        sink.discard()
        raise Refused("upload-too-large", str(exc), Kind.TOO_LARGE) from exc
    except BaseException:
        sink.discard()
        raise
    return sink.finish()


def _take(
    session: Session, settings: Settings, queue: JobQueue, grant: TransferGrant,
    received: ReceivedFile, now: dt.datetime,
) -> None:  # fmt: skip
    """Take the archive for what the grant names; a refusal is kept where it says
    something (a submission's first bundle) and raised."""
    try:
        receive(session=session, settings=settings, queue=queue, grant=grant,
                received=received, now=now)  # fmt: skip
    except Refused as exc:
        session.rollback()
        grant.outcome = f"refused: {exc.code}"
        keep_refusal(session, grant, exc)
        session.commit()
        raise
    grant.outcome = "taken"
    session.commit()


@router.put("/uploads/{grant_id}")
async def upload(
    grant_id: str, request: Request, session: SessionDep, settings: SettingsDep,
    queue: QueueDep, now: NowDep, expires: str = Query(""), signature: str = Query(""),
) -> Response:  # fmt: skip
    """One archive, through a signed URL that works once."""
    grant = await in_thread(claim_upload, session=session, settings=settings, grant_id=grant_id,
                            expires=expires, signature=signature, now=now)  # fmt: skip
    received = await _received(request, settings)
    if received.size == 0:
        received.path.unlink(missing_ok=True)
        return error_response("empty-upload", "the uploaded file is empty", 400)
    try:
        # In a thread: the archive is read by a child process while the loop goes on.
        await in_thread(_take, session, settings, queue, grant, received, now)
    except Refused as exc:
        return refused(exc)
    return JSONResponse({"status": "taken", "sha256": received.sha256}, status_code=200)


@router.get("/downloads/{sha256}/{filename}")
def download(
    sha256: str, filename: str, settings: SettingsDep, now: NowDep,
    expires: str = Query(""), signature: str = Query(""),
) -> Response:  # fmt: skip
    """A stored archive, through a signed URL, checked against its hash as it is sent."""
    if not _SHA256.fullmatch(sha256):
        raise HTTPException(404, detail="no such archive")
    check_download(settings, sha256, filename, expires, signature, now)
    store = artifact_store(settings)
    key = archive_key(sha256)
    try:
        chunks = verified_stream(store, key)
        size = store.size(key)
    except StorageError as exc:
        return refused(store_unavailable(exc))
    media = "application/zip" if filename.endswith(".zip") else "application/gzip"
    return download_response(chunks, size, media, filename)
