"""/api/v1 for audits (rules §11.12): the quarter's rounds with their nominations, ballots,
tally and draw, and each audit's steps, deadlines and outcome."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.accounts.web.security import ReviewerDep, SignedInDep
from app.core import text_limits as text
from app.core.views import Listing
from app.db.models import Audit, AuditRound
from app.review.domain.audits import Outcome
from app.review.services.audits import (
    AuditView,
    RoundView,
    audit_by_id,
    audit_view,
    cast_ballot,
    decide_audit,
    draw,
    nominate,
    open_round,
    record_step,
    round_by_quarter,
    rounds_view,
    tally,
)
from app.submissions.web.access import visible_submission
from app.web.api_errors import answered
from app.web.deps import NowDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["review: audits"])


def round_or_404(session: SessionDep, quarter: str) -> AuditRound:
    found = round_by_quarter(session, quarter)
    if found is None:
        raise HTTPException(404, detail=f"no audit round {quarter!r}")
    return found


def audit_or_404(session: SessionDep, public_id: str) -> Audit:
    found = audit_by_id(session, public_id)
    if found is None:
        raise HTTPException(404, detail=f"no audit {public_id!r}")
    return found


@router.get("/audit-rounds", response_model=Listing[RoundView])
def read_rounds(session: SessionDep, settings: SettingsDep, who: ReviewerDep) -> Listing[RoundView]:
    """Every round, newest first, with its nominations, tally, draw and audits (the
    review committee's)."""
    return Listing(data=rounds_view(session, settings))


def _round_answer(
    session: SessionDep, settings: SettingsDep, quarter: str, work: Callable[[], object]
) -> RoundView | JSONResponse:
    def done() -> RoundView:
        work()
        session.flush()
        return next(r for r in rounds_view(session, settings) if r.quarter == quarter)

    return answered(session, done)


class RoundRequest(BaseModel):
    quarter: str = Field(max_length=8, description="e.g. 2027-Q1")


@router.post("/audit-rounds", status_code=201, response_model=RoundView)
def create_round(
    body: RoundRequest, session: SessionDep, settings: SettingsDep, who: SignedInDep, now: NowDep
) -> RoundView | JSONResponse:
    """The chair opens a quarter's round; the committee is told."""
    return _round_answer(
        session,
        settings,
        body.quarter,
        lambda: open_round(session=session, who=who, quarter=body.quarter, at=now),
    )


class NominationRequest(BaseModel):
    submission: str = Field(max_length=text.SHORT, description="the result's submission id")
    reason: str = Field(max_length=text.LONG)


@router.post("/audit-rounds/{quarter}/nominations", response_model=RoundView)
def nominate_for_audit(
    quarter: str,
    body: NominationRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> RoundView | JSONResponse:
    """A committee member nominates a result published at least 4 weeks ago."""
    round_ = round_or_404(session, quarter)
    submission = visible_submission(session, who, body.submission)
    return _round_answer(
        session,
        settings,
        quarter,
        lambda: nominate(
            session=session,
            settings=settings,
            round_=round_,
            who=who,
            submission=submission,
            reason=body.reason,
            at=now,
        ),
    )


class BallotRequest(BaseModel):
    ranking: list[str] = Field(
        max_length=64, description="nomination ids and 'none', first wanted first"
    )


@router.post("/audit-rounds/{quarter}/ballots", response_model=RoundView)
def vote_on_audits(
    quarter: str,
    body: BallotRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> RoundView | JSONResponse:
    """A committee organisation's ranking (its latest counts)."""
    round_ = round_or_404(session, quarter)
    return _round_answer(
        session,
        settings,
        quarter,
        lambda: cast_ballot(
            session=session, settings=settings, round_=round_, who=who, ranking=body.ranking, at=now
        ),
    )


@router.post("/audit-rounds/{quarter}/tally", response_model=RoundView)
def tally_round(
    quarter: str, session: SessionDep, settings: SettingsDep, who: SignedInDep, now: NowDep
) -> RoundView | JSONResponse:
    """The chair counts the ballots (ranked choice, simple majority)."""
    round_ = round_or_404(session, quarter)
    return _round_answer(
        session,
        settings,
        quarter,
        lambda: tally(session=session, settings=settings, round_=round_, who=who, at=now),
    )


class DrawRequest(BaseModel):
    cohort: str = Field(max_length=16, description="the cohort the random audit is drawn from")


@router.post("/audit-rounds/{quarter}/draw", response_model=RoundView)
def draw_round(
    quarter: str,
    body: DrawRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> RoundView | JSONResponse:
    """The chair rolls the die for the random audit (1 in 6), then picks uniformly."""
    round_ = round_or_404(session, quarter)
    return _round_answer(
        session,
        settings,
        quarter,
        lambda: draw(
            session=session, settings=settings, round_=round_, who=who, cohort=body.cohort, at=now
        ),
    )


class StepRequest(BaseModel):
    step: str = Field(description="auditor, nda-provided, nda-executed, report, redacted-report")
    on: dt.date
    note: str = Field(default="", max_length=text.REASON, description="e.g. the auditor's name")


@router.post("/audits/{audit_id}/steps", response_model=AuditView)
def record_audit_step(
    audit_id: str,
    body: StepRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> AuditView | JSONResponse:
    audit = audit_or_404(session, audit_id)
    return answered(
        session,
        lambda: audit_view(
            settings,
            record_step(
                session=session,
                audit=audit,
                who=who,
                step=body.step,
                on=body.on,
                note=body.note,
                at=now,
            ),
        ),
    )


class OutcomeRequest(BaseModel):
    outcome: Outcome
    reason: str = Field(max_length=text.REASON)


@router.post("/audits/{audit_id}/outcome", response_model=AuditView)
def decide_audit_outcome(
    audit_id: str,
    body: OutcomeRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> AuditView | JSONResponse:
    """Passed, or a material failure: moved to RDI or removed (the chair's decisions)."""
    audit = audit_or_404(session, audit_id)
    return answered(
        session,
        lambda: audit_view(
            settings,
            decide_audit(
                session=session,
                settings=settings,
                audit=audit,
                who=who,
                outcome=body.outcome,
                reason=body.reason,
                at=now,
            ),
        ),
    )
