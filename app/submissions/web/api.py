"""/api/v1/submissions: upload, follow and read the checks of a submission."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from app.accounts.web.security import MemberDep, PrincipalDep
from app.checks.services.findings import CheckReport, check_report
from app.core.views import Counted
from app.submissions.domain.visibility import Access
from app.submissions.services.archives import ArchiveUnavailable, archive_download
from app.submissions.services.status import SubmissionStatus, submission_status
from app.submissions.services.views import (
    SubmissionSummary,
    UploadedSubmission,
    latest_check_run,
    list_submissions,
    submission_summary,
    uploaded_submission,
)
from app.submissions.services.visibility import visible_clause
from app.submissions.web.access import visible_submission
from app.submissions.web.uploads import UploadProblem, handle_upload
from app.web.api_errors import ErrorBody, error_response, refused
from app.web.deps import QueueDep, SessionDep, SettingsDep
from app.web.files import download_response
from app.web.threads import in_thread

router = APIRouter(prefix="/api/v1", tags=["submissions"])


_UPLOAD_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in (
        (400, "Malformed form or empty file"),
        (413, "Upload, archive member or expansion over the limits"),
        (415, "Not multipart, or not a .tar.gz/.tgz/.zip archive"),
        (422, "Unsafe or unreadable archive, or no submission layout inside"),
        (503, "The artifact store cannot be reached: nothing was recorded, try again later"),
    )
}


@router.post(
    "/submissions",
    status_code=201,
    response_model=UploadedSubmission,
    responses={
        200: {"model": UploadedSubmission, "description": "The same archive was uploaded before"},
        **_UPLOAD_ERRORS,
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file"],
                        "properties": {
                            "file": {
                                "type": "string",
                                "format": "binary",
                                "description": ".tar.gz, .tgz or .zip bundle",
                            },
                            "not_for_review": {
                                "type": "boolean",
                                "description": "an unverified result",
                            },
                            "publication_mode": {
                                "type": "string",
                                "enum": ["confidential", "provisional"],
                                "description": "rules §11.2; confidential by default",
                            },
                            "embargo_date": {
                                "type": "string",
                                "format": "date",
                                "description": "rules §4.2: hold the publication until then",
                            },
                            "scenario": {
                                "type": "string",
                                "enum": ["cop", "con"],
                                "description": "rules §2.1: client on premises or over the "
                                "network; a Serviced result is con",
                            },
                        },
                    }
                }
            },
        }
    },
)
async def create_submission(
    request: Request,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
    who: MemberDep,
) -> UploadedSubmission | JSONResponse:
    """Upload a submission bundle (multipart part ``file``) and queue its checks; a token
    with the ``submit`` scope, for the token holder's organisation."""
    try:
        accepted = await handle_upload(
            request,
            session=session,
            settings=settings,
            queue=queue,
            who=who,
        )
    except UploadProblem as problem:
        return error_response(problem.code, problem.message, problem.status, member=problem.member)
    response.status_code = 200 if accepted.duplicate else 201
    return await in_thread(uploaded_submission, accepted.submission, accepted.duplicate, settings)


@router.get("/submissions", response_model=Counted[SubmissionSummary])
def read_submissions(
    session: SessionDep,
    settings: SettingsDep,
    who: PrincipalDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31)] = 0,
) -> Counted[SubmissionSummary]:
    """The submissions the caller may see (rules §11.9): the published ones, the caller's
    organisation's own, those under review while the caller's organisation is under
    review too, and every one for the committee and the chair."""
    visible = visible_clause(session, who)
    rows, total = list_submissions(session, visible, limit=limit, offset=offset)
    return Counted(data=[submission_summary(s, settings) for s in rows], count=total)


@router.get("/submissions/{public_id}/status", response_model=SubmissionStatus)
def read_submission_status(
    public_id: str, session: SessionDep, who: PrincipalDep
) -> SubmissionStatus:
    """What a page follows while work runs: the state, the check job's progress, and how
    many re-counts and reproductions are still running. Small, for polling."""
    return submission_status(session, visible_submission(session, who, public_id))


@router.get("/submissions/{public_id}/findings", response_model=CheckReport)
def read_findings(public_id: str, session: SessionDep, who: PrincipalDep) -> CheckReport:
    """The latest check run, in the same shape as ``endpoints-portal check --json``."""
    submission = visible_submission(session, who, public_id, Access.FULL)
    return check_report(latest_check_run(session, submission), submission.state)


@router.get(
    "/submissions/{public_id}/archive",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {
                kind: {"schema": {"type": "string", "format": "binary"}}
                for kind in ("application/gzip", "application/zip")
            },
            "description": "The archive, byte for byte as it was uploaded",
        },
        404: {"model": ErrorBody, "description": "No such submission, or not yours to have"},
        409: {"model": ErrorBody, "description": "The stored archive is damaged: not sent"},
        503: {"model": ErrorBody, "description": "The artifact store cannot be reached now"},
    },
)
def download_archive(
    public_id: str, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> Response:
    """The submission's archive as uploaded, for its organisation, its reviewers and the
    chair; streamed from the artifact store once its hash has been checked."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    try:
        download = archive_download(settings, submission)
    except ArchiveUnavailable as exc:
        return refused(exc)
    return download_response(download.chunks, download.size, download.media_type, download.filename)
