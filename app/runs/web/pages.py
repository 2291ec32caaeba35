"""The forms of re-counts and reproductions on a submission's page."""

from __future__ import annotations

from fastapi import Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from app.accounts.services.authorization import authorize
from app.accounts.web.security import page_router, principal_of, verify_csrf
from app.core import text_limits as text
from app.core.authorization import Action
from app.db.models import Retokenization, Submission
from app.runs.services.reproductions import (
    ReproductionError,
    request_reproduction,
)
from app.runs.services.retokenization import (
    RetokenizationError,
    cancel_retokenization,
    get_retokenization,
    request_retokenization,
)
from app.submissions.web.access import acting_on, member_submission
from app.web.api_errors import status_of
from app.web.deps import QueueDep, SessionDep, SettingsDep
from app.web.forms import SubmissionFormRefused

router = page_router()


@router.post("/submissions/{public_id}/retokenizations")
def recount_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    queue: QueueDep,
    point: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    verify_csrf(request, csrf_token)
    who = principal_of(request)
    submission = acting_on(session, who, public_id, Action.RECOUNT)
    assert who is not None  # acting_on let only the signed-in through
    try:
        request_retokenization(
            session=session, queue=queue, submission=submission, point_label=point or None,
            actor=who.email,
        )  # fmt: skip
    except RetokenizationError as exc:
        raise HTTPException(status_of(exc), detail=exc.message) from exc
    session.commit()
    return RedirectResponse(f"/submissions/{public_id}#retokenization", status_code=303)


def _members_retokenization(
    request: Request, session: SessionDep, rid: str
) -> tuple[Retokenization, Submission]:
    retok = get_retokenization(session, rid)
    if retok is None:
        raise HTTPException(404, detail=f"no re-tokenization with id {rid!r}")
    return retok, member_submission(request, session, retok.submission.public_id)


@router.get("/retokenizations/{rid}")
def retokenization_page(request: Request, rid: str, session: SessionDep) -> Response:
    """A re-count is shown in its submission's re-count section."""
    _, owner = _members_retokenization(request, session, rid)
    return RedirectResponse(f"/submissions/{owner.public_id}#retokenization", status_code=303)


@router.post("/retokenizations/{rid}/cancel")
def cancel_from_page(
    request: Request, rid: str, session: SessionDep, csrf_token: str = Form("")
) -> Response:
    verify_csrf(request, csrf_token)
    retok, owner = _members_retokenization(request, session, rid)
    public_id = owner.public_id
    who = principal_of(request)
    acting_on(session, who, public_id, Action.RECOUNT)
    assert who is not None
    try:
        cancel_retokenization(session=session, retok=retok, actor=who.email)
    except RetokenizationError as exc:
        raise HTTPException(status_of(exc), detail=exc.message) from exc
    session.commit()
    return RedirectResponse(f"/submissions/{public_id}#retokenization", status_code=303)


@router.post("/submissions/{public_id}/reproductions")
def reproduce_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    settings: SettingsDep,
    queue: QueueDep,
    point: str = Form(..., max_length=text.SHORT),
    endpoint_url: str = Form(..., max_length=text.URL),
    model: str = Form("", max_length=text.SHORT),
    api_key: str = Form("", max_length=text.SECRET),
    time_cap_s: float | None = Form(None),
    same_system: bool = Form(False),
    runs: int = Form(1, ge=1, le=20),
    csrf_token: str = Form(""),
) -> Response:
    verify_csrf(request, csrf_token)
    who = principal_of(request)
    submission = acting_on(session, who, public_id, Action.REPRODUCE)
    assert who is not None  # acting_on let only the signed-in through
    if same_system:
        authorize(who, submission, Action.ATTEST_SAME_SYSTEM)
    try:
        request_reproduction(
            session=session,
            settings=settings,
            queue=queue,
            submission=submission,
            point_label=point,
            endpoint_url=endpoint_url,
            model=model or None,
            api_key=api_key or None,
            time_cap_s=time_cap_s,
            requested_by=who.email,
            same_system=same_system,
            runs=runs,
        )
    except ReproductionError as exc:
        session.rollback()
        # Filled in again as sent (the API key is never echoed back).
        typed = {"point": point, "endpoint_url": endpoint_url, "model": model,
                 "time_cap_s": "" if time_cap_s is None else f"{time_cap_s:g}",
                 "same_system": "on" if same_system else "", "runs": str(runs)}  # fmt: skip
        raise SubmissionFormRefused.of(public_id, "reproduce", exc, typed) from exc
    session.commit()
    return RedirectResponse(f"/submissions/{public_id}#reproductions", status_code=303)
