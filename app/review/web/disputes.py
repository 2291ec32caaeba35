"""/api/v1 for a dispute (rules §11.6): its deadlines, the chair's certification and
panel, the parties' statements, the panel's recommendation, the chair's extension and
ruling, an appeal."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.accounts.web.security import PrincipalDep, SignedInDep
from app.core import text_limits as text
from app.core.authorization import Action
from app.review.domain.disputes import Recommendation, Ruling
from app.review.services.disputes import (
    DisputeView,
    StepFields,
    dispute_of,
    dispute_view,
    take_step,
)
from app.submissions.domain.visibility import Access
from app.submissions.web.access import acting_on, visible_submission
from app.web.api_errors import answered
from app.web.deps import NowDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["review: disputes"])
DISPUTE = "/submissions/{public_id}/dispute"
# Each step of a dispute, and the act the one rule is asked about for it.
DISPUTE_ACTS = {
    "certification": Action.DECIDE,
    "statements": Action.STATE_IN_DISPUTE,
    "recommendation": Action.RECOMMEND_IN_DISPUTE,
    "extension": Action.DECIDE,
    "ruling": Action.DECIDE,
    "appeal": Action.STATE_IN_DISPUTE,
}


@router.get(DISPUTE, response_model=DisputeView)
def read_dispute(
    public_id: str, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> DisputeView:
    """The dispute over the submission's open objections, with each step's deadline (the
    review's members, like the objections)."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    dispute = dispute_of(session, submission)
    if dispute is None:
        raise HTTPException(404, detail="no dispute: Week 6 did not close with objections open")
    return dispute_view(session, settings, dispute)


class DisputeStep(BaseModel):
    """A step's fields: certification takes the panel; a statement its body; the panel's
    recommendation its word and a note (body); an extension, a ruling and an appeal a
    reason (and a ruling its word)."""

    panel: list[str] = Field(default=[], max_length=12, description="neutral members' e-mails")
    body: str = Field(default="", max_length=text.LONG)
    recommendation: Recommendation | None = None
    ruling: Ruling | None = None
    reason: str = Field(default="", max_length=text.REASON)


@router.post(DISPUTE + "/{step}", response_model=DisputeView)
def take_dispute_step(
    public_id: str,
    step: str,
    body: DisputeStep,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> DisputeView | JSONResponse:
    """One step of the dispute: ``certification`` (the chair, within 2 business days of
    Week 6's close, naming the panel), ``statements`` (a party, within 10 of
    notification: without one an objector's objection lapses, and the submitter is
    withdrawn 10 business days later), ``recommendation`` (a panel member: uphold,
    dismiss or investigate), ``extension`` (the chair, once, for an investigation),
    ``ruling`` (the chair's binding decision: the disputed objections upheld or dismissed),
    ``appeal`` (a party, to the Head of MLPerf within 14 days)."""
    if step not in DISPUTE_ACTS:
        raise HTTPException(404, detail=f"no dispute step {step!r}")
    submission = acting_on(session, who, public_id, DISPUTE_ACTS[step])
    fields = StepFields(
        panel=tuple(body.panel), body=body.body, recommendation=body.recommendation or "",
        ruling=body.ruling or "", reason=body.reason,
    )  # fmt: skip

    def done() -> DisputeView:
        take_step(step, fields, session=session, settings=settings, submission=submission,
                  who=who, at=now)  # fmt: skip
        dispute = dispute_of(session, submission)
        assert dispute is not None
        return dispute_view(session, settings, dispute)

    return answered(session, done)
