"""/api/v1 for a dispute (rules §11.6): its deadlines, the chair's certification and
panel, the parties' statements, the panel's recommendation, the chair's extension and
ruling, an appeal."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.accounts.web.security import PrincipalDep, SignedInDep
from app.core import text_limits as text
from app.core.authorization import Action
from app.review.domain.disputes import Recommendation, Ruling
from app.review.services.disputes import (
    DisputeView,
    appeal,
    certify,
    dispute_of,
    dispute_view,
    extend,
    file_statement,
    recommend,
    rule,
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


class Certification(BaseModel):
    panel: list[str] = Field(max_length=12, description="the neutral members' e-mail addresses")


class Statement(BaseModel):
    body: str = Field(max_length=text.LONG)


class PanelWord(BaseModel):
    recommendation: Recommendation
    note: str = Field(max_length=text.LONG)


class Why(BaseModel):
    reason: str = Field(max_length=text.REASON)


class ChairRuling(BaseModel):
    ruling: Ruling
    reason: str = Field(max_length=text.REASON)


def _carried(
    session: SessionDep,
    settings: SettingsDep,
    public_id: str,
    who: SignedInDep,
    action: Action,
    call: Callable[..., object],
) -> DisputeView | JSONResponse:
    """Run one act on the submission's dispute (*action*: the one rule's question first)
    and answer with the dispute as it now stands."""
    submission = acting_on(session, who, public_id, action)

    def done() -> DisputeView:
        call(submission)
        dispute = dispute_of(session, submission)
        assert dispute is not None
        return dispute_view(session, settings, dispute)

    return answered(session, done)


@router.post(f"{DISPUTE}/certification", response_model=DisputeView)
def certify_dispute(
    public_id: str,
    body: Certification,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> DisputeView | JSONResponse:
    """The chair certifies the open objections and names the panel (within 2 business
    days of Week 6's close); the parties' statements are due 10 business days on."""
    return _carried(
        session,
        settings,
        public_id,
        who,
        Action.DECIDE,
        lambda s: certify(
            session=session, settings=settings, submission=s, who=who, panel=body.panel, at=now
        ),
    )


@router.post(f"{DISPUTE}/statements", response_model=DisputeView)
def state_in_dispute(
    public_id: str,
    body: Statement,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> DisputeView | JSONResponse:
    """A party's written statement: without one by the deadline an objector's objection
    lapses, and the submitter is withdrawn 10 business days later."""
    return _carried(
        session,
        settings,
        public_id,
        who,
        Action.STATE_IN_DISPUTE,
        lambda s: file_statement(session=session, submission=s, who=who, body=body.body, at=now),
    )


@router.post(f"{DISPUTE}/recommendation", response_model=DisputeView)
def recommend_in_dispute(
    public_id: str,
    body: PanelWord,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> DisputeView | JSONResponse:
    """The panel's recommendation (a member of it): uphold, dismiss or investigate."""
    return _carried(
        session,
        settings,
        public_id,
        who,
        Action.RECOMMEND_IN_DISPUTE,
        lambda s: recommend(
            session=session,
            submission=s,
            who=who,
            recommendation=body.recommendation,
            note=body.note,
            at=now,
        ),
    )


@router.post(f"{DISPUTE}/extension", response_model=DisputeView)
def extend_dispute(
    public_id: str,
    body: Why,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> DisputeView | JSONResponse:
    """The chair's one extension, for the investigation the panel asked for."""
    return _carried(
        session,
        settings,
        public_id,
        who,
        Action.DECIDE,
        lambda s: extend(session=session, submission=s, who=who, reason=body.reason, at=now),
    )


@router.post(f"{DISPUTE}/ruling", response_model=DisputeView)
def rule_on_dispute(
    public_id: str,
    body: ChairRuling,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> DisputeView | JSONResponse:
    """The chair's binding decision: the disputed objections upheld or dismissed."""
    return _carried(
        session,
        settings,
        public_id,
        who,
        Action.DECIDE,
        lambda s: rule(
            session=session,
            settings=settings,
            submission=s,
            who=who,
            ruling=body.ruling,
            reason=body.reason,
            at=now,
        ),
    )


@router.post(f"{DISPUTE}/appeal", response_model=DisputeView)
def appeal_dispute(
    public_id: str,
    body: Why,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> DisputeView | JSONResponse:
    """A party appeals the ruling to the Head of MLPerf within 14 days."""
    return _carried(
        session,
        settings,
        public_id,
        who,
        Action.STATE_IN_DISPUTE,
        lambda s: appeal(
            session=session, settings=settings, submission=s, who=who, reason=body.reason, at=now
        ),
    )
