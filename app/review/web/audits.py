"""/api/v1 for audits (rules §11.12): the quarter's rounds with their nominations, ballots,
tally and draw, and each audit's steps, deadlines and outcome."""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app.accounts.web.security import ReviewerDep, SignedInDep
from app.core import text_limits as text
from app.core.lifecycle import Screening
from app.core.views import Listing
from app.review.domain.audits import NominationKind, Outcome, ReproducibilityCase
from app.review.services.audits import (
    AUDIT_ACTS,
    NOMINATION_ACTS,
    ROUND_ACTS,
    AuditFields,
    AuditView,
    NominationView,
    RoundView,
    act_on_audits,
    audit_by_id,
    audit_view,
    nomination_by_id,
    nomination_view,
    rounds_view,
)
from app.submissions.web.access import visible_submission
from app.web.api_errors import answered
from app.web.deps import NowDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["review: audits"])


@router.get("/audit-rounds", response_model=Listing[RoundView])
def read_rounds(session: SessionDep, settings: SettingsDep, who: ReviewerDep) -> Listing[RoundView]:
    """Every round, newest first, with its nominations, tally, draw and audits (the
    review committee's)."""
    return Listing(data=rounds_view(session, settings))


class RoundRequest(BaseModel):
    quarter: str = Field(max_length=8, description="e.g. 2027-Q1")


@router.post("/audit-rounds", status_code=201, response_model=RoundView)
def create_round(
    body: RoundRequest, session: SessionDep, settings: SettingsDep, who: SignedInDep, now: NowDep
) -> RoundView | JSONResponse:
    """The chair opens a quarter's round; the committee is told."""
    return _round_answer(session, settings, who, now, "open", AuditFields(quarter=body.quarter))


class RoundAct(BaseModel):
    """An act's fields: a nomination names the result's submission id, a reason and its
    kind (a reproducibility nomination its case too); a ballot ranks nomination ids and
    'none'; a draw names the cohort; a tally needs none."""

    submission: str = Field(default="", max_length=text.SHORT)
    reason: str = Field(default="", max_length=text.LONG)
    kind: NominationKind = NominationKind.COMMITTEE
    points: list[str] = Field(default=[], max_length=64, description="<system>/<model>/r<N>")
    reproduction: str = Field(default="", max_length=text.LONG)
    deviation: str = Field(default="", max_length=text.REASON)
    rule_cited: str = Field(default="", max_length=text.SHORT)
    ranking: list[str] = Field(default=[], max_length=64)
    cohort: str = Field(default="", max_length=16)


@router.post("/audit-rounds/{quarter}/{act}", response_model=RoundView)
def act_on_round(
    quarter: str,
    act: str,
    body: RoundAct,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> RoundView | JSONResponse:
    """``nominations`` (a committee member: a result published at least 4 weeks ago; a
    reproducibility nomination within the late-concern window, screened before it is on
    the slate; a chair: a system with a new accelerator),
    ``ballots`` (a committee organisation's ranking, its latest counting), ``tally`` (the
    chair: ranked choice, simple majority; no majority, the chairs' random pick), ``draw``
    (the chair: the die, one face in six, then a uniform pick in the cohort)."""
    if act not in ROUND_ACTS:
        raise HTTPException(404, detail=f"no audit round act {act!r}")
    nominated = visible_submission(session, who, body.submission) if body.submission else None
    case = ReproducibilityCase(tuple(body.points), body.reproduction, body.deviation,
                               body.rule_cited)  # fmt: skip
    fields = AuditFields(quarter=quarter, submission=nominated, reason=body.reason,
                         ranking=tuple(body.ranking), cohort=body.cohort, kind=body.kind,
                         case=case)  # fmt: skip
    return _round_answer(session, settings, who, now, act, fields)


def _round_answer(
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
    act: str,
    fields: AuditFields,
) -> RoundView | JSONResponse:
    def done() -> RoundView:
        act_on_audits(act, fields, session=session, settings=settings, who=who, at=now)
        session.flush()
        return next(r for r in rounds_view(session, settings) if r.quarter == fields.quarter)

    return answered(session, done)


class AuditAct(BaseModel):
    """``steps``: the step (auditor, nda-provided, nda-executed, report, redacted-report),
    its day and a note; ``outcome``: passed, failed-rdi or failed-removed, and why."""

    step: str = Field(default="", max_length=text.SHORT)
    on: dt.date | None = None
    note: str = Field(default="", max_length=text.REASON)
    outcome: Outcome | None = None
    reason: str = Field(default="", max_length=text.REASON)


@router.post("/audits/{audit_id}/{act}", response_model=AuditView)
def act_on_audit(
    audit_id: str,
    act: str,
    body: AuditAct,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> AuditView | JSONResponse:
    """The chair records an audit's step, or its outcome (a material failure moves the
    result to RDI or removes it, by the chair's decisions)."""
    if act not in AUDIT_ACTS or audit_by_id(session, audit_id) is None:
        raise HTTPException(404, detail=f"no audit {audit_id!r} or act {act!r}")
    fields = AuditFields(audit=audit_id, step=body.step, on=body.on, note=body.note,
                         outcome=body.outcome or "", reason=body.reason)  # fmt: skip

    def done() -> AuditView:
        act_on_audits(act, fields, session=session, settings=settings, who=who, at=now)
        found = audit_by_id(session, audit_id)
        assert found is not None
        return audit_view(settings, found)

    return answered(session, done)


class NominationAct(BaseModel):
    """``screenings`` (a neutral member): substantiated or unsubstantiated, with a note;
    ``slate`` (the chair, after the screenings): admit, or not with a reason."""

    finding: Screening | None = None
    note: str = Field(default="", max_length=text.REASON)
    admit: bool = False
    reason: str = Field(default="", max_length=text.REASON)


@router.post("/audit-nominations/{nomination_id}/{act}", response_model=NominationView)
def act_on_nomination(
    nomination_id: str,
    act: str,
    body: NominationAct,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> NominationView | JSONResponse:
    """A reproducibility nomination's screening by neutral members, then the chair's word
    on the slate (SR §10.4)."""
    if act not in NOMINATION_ACTS or nomination_by_id(session, nomination_id) is None:
        raise HTTPException(404, detail=f"no nomination {nomination_id!r} or act {act!r}")
    fields = AuditFields(nomination=nomination_id, finding=body.finding or "", note=body.note,
                         admit=body.admit, reason=body.reason)  # fmt: skip

    def done() -> NominationView:
        act_on_audits(act, fields, session=session, settings=settings, who=who, at=now)
        found = nomination_by_id(session, nomination_id)
        assert found is not None
        return nomination_view(found)

    return answered(session, done)
