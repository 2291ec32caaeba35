"""The submission page's correction forms (rules §11.7): the submitting organisation
uploads a corrected bundle; the chair approves or declines one filed after
finalization. Both go through the same services as the API; a refusal is shown on the
submission page beside its form."""

from __future__ import annotations

from functools import partial

from fastapi import Form, Request
from fastapi.responses import Response

from app.accounts.web.security import page_router, signed_in_as, verify_csrf
from app.core import text_limits as text
from app.core.authorization import Action, Scope
from app.core.refusals import Refused
from app.review.services.corrections import decide_correction, file_correction
from app.review.web.forms import back_to
from app.submissions.web.access import acting_on
from app.submissions.web.uploads import UploadProblem, receive_form
from app.web.deps import NowDep, QueueDep, SessionDep, SettingsDep
from app.web.forms import SubmissionFormRefused
from app.web.threads import committed, in_thread

router = page_router()

_FORM = "correction"


@router.post("/submissions/{public_id}/corrections")
async def correct_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
    now: NowDep,
) -> Response:
    """The submitting organisation uploads a corrected bundle."""
    who = signed_in_as(request)
    # Who may correct is asked before a byte of the archive is read.
    submission = await in_thread(acting_on, session, who, public_id, Action.CORRECT)
    try:
        parsed, kept = await receive_form(
            request, session=session, settings=settings, who=who, check_csrf=True
        )
    except UploadProblem as problem:
        kept_reason = {"reason": problem.fields.get("reason", "")}
        raise SubmissionFormRefused(public_id, _FORM, problem.message, problem.status,
                                    kept_reason, problem.code) from problem  # fmt: skip
    assert parsed.file is not None
    work = partial(
        file_correction, session=session, settings=settings, queue=queue, submission=submission,
        who=who, received=parsed.file, reason=kept.get("reason", ""), at=now,
    )  # fmt: skip
    try:
        # In a thread: the archive is read by a child process while the loop goes on.
        await in_thread(committed, session, work)
    except Refused as exc:
        raise SubmissionFormRefused.of(public_id, _FORM, exc, kept) from exc
    return back_to(public_id, "corrections")


@router.post("/submissions/{public_id}/corrections/{correction_id}/decision")
def decide_correction_from_page(
    request: Request,
    public_id: str,
    correction_id: str,
    session: SessionDep,
    queue: QueueDep,
    now: NowDep,
    verdict: str = Form("", max_length=text.SHORT),
    reason: str = Form("", max_length=text.REASON),
    csrf_token: str = Form(""),
) -> Response:
    """The chair approves or declines a correction requested after finalization."""
    verify_csrf(request, csrf_token)
    who = signed_in_as(request, Scope.PUBLISH)
    submission = acting_on(session, who, public_id, Action.DECIDE)
    try:
        decide_correction(
            session=session, queue=queue, submission=submission, correction_id=correction_id,
            approve=verdict == "approve", actor=who.email, reason=reason, at=now,
        )  # fmt: skip
    except Refused as exc:
        session.rollback()
        raise SubmissionFormRefused.of(
            public_id, f"{_FORM}-decision", exc, {"reason": reason}
        ) from exc
    session.commit()
    return back_to(public_id, "corrections")
