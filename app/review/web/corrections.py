"""/api/v1 for corrections of a submission's non-result content (rules §11.7): the
submitting organisation uploads the corrected bundle; after finalization the chair
approves or declines it."""

from __future__ import annotations

from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.web.security import SignedInDep
from app.core import text_limits as text
from app.core.authorization import Action
from app.core.refusals import Refused
from app.core.views import Listing
from app.review.services.corrections import (
    CorrectionView,
    correction_view,
    corrections_of,
    decide_correction,
    file_correction,
)
from app.submissions.domain.visibility import Access
from app.submissions.web.access import acting_on, visible_submission
from app.submissions.web.uploads import UploadProblem, receive_form
from app.web.api_errors import answered, error_response, refused
from app.web.deps import NowDep, QueueDep, SessionDep, SettingsDep
from app.web.threads import committed, in_thread

router = APIRouter(prefix="/api/v1", tags=["review: corrections"])

_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file", "reason"],
                    "properties": {
                        "file": {
                            "type": "string",
                            "format": "binary",
                            "description": "the corrected bundle (.tar.gz, .tgz or .zip): every "
                            "point's result files as submitted, less the points withdrawn",
                        },
                        "reason": {"type": "string", "description": "what it corrects"},
                    },
                }
            }
        },
    }
}


@router.post(
    "/submissions/{public_id}/corrections",
    status_code=202,
    response_model=CorrectionView,
    openapi_extra=_UPLOAD_BODY,
)
async def create_correction(
    public_id: str,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
    who: SignedInDep,
    now: NowDep,
) -> CorrectionView | JSONResponse:
    """Correct the submission's non-result content: the bundle is compared with the
    submitted one (a refusal names the files whose results differ) and its checks are
    queued; in review it is applied once they pass, after finalization it waits for the
    chair (rules §11.7)."""
    # Who may correct is asked before a byte of the archive is read.
    submission = await in_thread(acting_on, session, who, public_id, Action.CORRECT)
    try:
        parsed, _ = await receive_form(
            request, session=session, settings=settings, who=who, check_csrf=False
        )
    except UploadProblem as problem:
        return error_response(problem.code, problem.message, problem.status, member=problem.member)
    assert parsed.file is not None
    try:
        # In a thread: the archive is read by a child process while the loop goes on.
        return await in_thread(
            _file, session=session, settings=settings, queue=queue, submission=submission,
            who=who, received=parsed.file, reason=parsed.fields.get("reason", ""), at=now,
        )  # fmt: skip
    except Refused as exc:
        return refused(exc)


def _file(*, session: Session, **correction: Any) -> CorrectionView:
    """The correction filed and committed (nothing kept when it is refused)."""
    filed = committed(session, partial(file_correction, session=session, **correction))
    return correction_view(filed)


@router.get("/submissions/{public_id}/corrections", response_model=Listing[CorrectionView])
def read_corrections(
    public_id: str, session: SessionDep, who: SignedInDep
) -> Listing[CorrectionView]:
    """The submission's corrections, newest last (the committee and the submitting
    organisation)."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    return Listing(data=[correction_view(c) for c in corrections_of(session, submission)])


class CorrectionDecision(BaseModel):
    approve: bool = Field(description="true: approve (its checks run again, then it applies)")
    reason: str = Field("", max_length=text.REASON, description="required to decline")


@router.post(
    "/submissions/{public_id}/corrections/{correction_id}/decision",
    response_model=CorrectionView,
)
def decide_on_correction(
    public_id: str,
    correction_id: str,
    body: CorrectionDecision,
    session: SessionDep,
    queue: QueueDep,
    who: SignedInDep,
    now: NowDep,
) -> CorrectionView | JSONResponse:
    """The chair approves or declines a correction requested after finalization."""
    submission = acting_on(session, who, public_id, Action.DECIDE)
    decided = answered(
        session,
        lambda: decide_correction(
            session=session, queue=queue, submission=submission, correction_id=correction_id,
            approve=body.approve, actor=who.email, reason=body.reason, at=now,
        ),
    )  # fmt: skip
    return decided if isinstance(decided, JSONResponse) else correction_view(decided)
