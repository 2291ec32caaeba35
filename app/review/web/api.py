"""/api/v1 for peer review: objections and their threads, reviewer assignment, embargo
changes, per-point states and the inbox (rules §4.2, §4.4, §11.1, §11.4)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy import select

from app.accounts.services.accounts import Principal
from app.accounts.web.security import (
    ChairDep,
    MemberDep,
    PrincipalDep,
    ReviewerDep,
    submitter_or_chair,
    visible_submission,
)
from app.db.models import User
from app.review.domain.objections import ACTIONS, TYPES, ObjectionRefused
from app.review.services.audit import timeline
from app.review.services.decisions import decide, in_review, set_point_state, withdraw
from app.review.services.notifications import inbox, mark_read, unread_count
from app.review.services.objections import (
    act,
    file_objection,
    get_objection,
    objection_dict,
    objections_of,
)
from app.review.services.review import (
    assign_reviewer,
    change_embargo,
    complete_review,
    review_summary,
)
from app.submissions.domain.visibility import Access
from app.submissions.services.views import submission_summary
from app.web.api_errors import attempt, refused
from app.web.deps import NowDep, SessionDep, SettingsDep, submission_or_404

router = APIRouter(prefix="/api/v1")


def _user(session: SessionDep, who: Principal) -> User:
    user = session.get(User, who.user_id)
    assert user is not None
    return user


@router.get("/objection-types")
def read_objection_types() -> dict[str, Any]:
    """The types of objection, their severity, and the actions on them (rules §11.4)."""
    return {
        "types": [
            {
                "id": t.id,
                "title": t.title,
                "severity": t.severity,
                "blocks_finalization": t.blocks_finalization,
                "late_ground": t.late_ground,
            }
            for t in TYPES.values()
        ],
        "actions": [
            {"id": a.id, "by": sorted(p.value for p in a.parties), "needs_body": a.needs_body}
            for a in ACTIONS.values()
        ],
    }


class ObjectionRequest(BaseModel):
    type: str = Field(description="one of /api/v1/objection-types")
    title: str = Field(max_length=300)
    rule_cited: str = Field(description="the rule section, e.g. 'R §6.2'", max_length=300)
    evidence: str = Field(
        description="logs, config values, reproduction attempts", max_length=50_000
    )
    point: str | None = Field(default=None, description="<system>/<model>/r<N>, if about one point")


@router.get("/submissions/{public_id}/objections")
def read_objections(
    public_id: str, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> dict[str, Any]:
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    return {
        "data": [objection_dict(session, settings, o) for o in objections_of(session, submission)]
    }


@router.post("/submissions/{public_id}/objections", status_code=201)
def create_objection(
    public_id: str,
    body: ObjectionRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: ReviewerDep,
) -> JSONResponse:
    """File an objection (a committee member's token, from another organisation)."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    try:
        objection = file_objection(
            session=session,
            settings=settings,
            submission=submission,
            filer=_user(session, who),
            type_id=body.type,
            title=body.title,
            rule_cited=body.rule_cited,
            evidence=body.evidence,
            point_label=body.point,
        )
    except ObjectionRefused as exc:
        session.rollback()
        return refused(exc)
    session.commit()
    return JSONResponse(objection_dict(session, settings, objection), status_code=201)


@router.get("/objections/{objection_id}")
def read_objection(
    objection_id: str, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> dict[str, Any]:
    objection = get_objection(session, objection_id)
    if objection is None:
        raise HTTPException(404, detail=f"no objection with id {objection_id!r}")
    visible_submission(session, who, objection.submission.public_id, Access.REVIEW)
    return objection_dict(session, settings, objection)


class ObjectionAction(BaseModel):
    action: str = Field(
        description="acknowledge, contest, accept, retract, mark_unresolved, resolve, "
        "comment or join"
    )
    body: str = Field(default="", max_length=50_000)


@router.post("/objections/{objection_id}/actions")
def act_on_objection(
    objection_id: str,
    body: ObjectionAction,
    session: SessionDep,
    settings: SettingsDep,
    who: MemberDep,
) -> JSONResponse:
    """Answer, accept, retract, mark unresolved, resolve (chair), comment or join."""
    objection = get_objection(session, objection_id)
    if objection is None:
        raise HTTPException(404, detail=f"no objection with id {objection_id!r}")
    visible_submission(session, who, objection.submission.public_id, Access.REVIEW)
    refused = attempt(
        session,
        lambda: act(
            session=session,
            settings=settings,
            objection=objection,
            user=_user(session, who),
            action=body.action,
            body=body.body,
        ),
    )
    return refused or JSONResponse(objection_dict(session, settings, objection))


class ReviewerRequest(BaseModel):
    email: str | None = Field(default=None, description="a committee member; at random if absent")


@router.post("/submissions/{public_id}/reviewer")
def reassign_reviewer(
    public_id: str,
    body: ReviewerRequest,
    session: SessionDep,
    settings: SettingsDep,
    chair: ChairDep,
) -> JSONResponse:
    """The chair assigns (or re-draws) the submission's reviewer."""
    submission = submission_or_404(session, public_id)
    chosen = None
    if body.email:
        chosen = session.scalar(select(User).where(User.email == body.email.strip().lower()))
        if chosen is None:
            raise HTTPException(404, detail=f"no user {body.email!r}")
    refused = attempt(
        session,
        lambda: assign_reviewer(session, settings, submission, reviewer=chosen, actor=chair.email),
    )
    return refused or JSONResponse(review_summary(session, settings, submission))


class ReviewComplete(BaseModel):
    notes: str = Field(default="", max_length=50_000)


@router.post("/submissions/{public_id}/review-complete")
def post_review_complete(
    public_id: str,
    body: ReviewComplete,
    session: SessionDep,
    settings: SettingsDep,
    who: ReviewerDep,
) -> JSONResponse:
    """The assigned reviewer's review is done (due by the end of Week 3, rules §4.4)."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    refused = attempt(
        session,
        lambda: complete_review(
            session=session, submission=submission, reviewer=_user(session, who), notes=body.notes
        ),
    )
    return refused or JSONResponse(review_summary(session, settings, submission))


class EmbargoRequest(BaseModel):
    embargo_date: dt.date | None = Field(description="a future date, or null to lift it")


@router.put("/submissions/{public_id}/embargo")
def put_embargo(
    public_id: str,
    body: EmbargoRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: MemberDep,
) -> JSONResponse:
    """Change the embargo date (the submitting organisation); the committee is told."""
    submission = submitter_or_chair(session, who, public_id)
    refused = attempt(
        session,
        lambda: change_embargo(
            session=session,
            settings=settings,
            submission=submission,
            embargo=body.embargo_date,
            actor=who.email,
            who=who,
        ),
    )
    return refused or JSONResponse(review_summary(session, settings, submission))


class PointStateRequest(BaseModel):
    state: str = Field(description="active, withdrawn, disputed or invalidated")
    reason: str = Field(max_length=5000)


@router.post("/submissions/{public_id}/points/{system}/{model}/{point}/state")
def put_point_state(
    public_id: str,
    system: str,
    model: str,
    point: str,
    body: PointStateRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: MemberDep,
    now: NowDep,
) -> JSONResponse:
    """Withdraw a faulty point in review (its submitter or the chair), hold it in dispute
    or invalidate it after finalization (the chair). It leaves every active curve at once."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    refused = attempt(
        session,
        lambda: set_point_state(
            session=session,
            settings=settings,
            submission=submission,
            point_label=f"{system}/{model}/{point}",
            state=body.state,
            who=who,
            reason=body.reason,
            at=now,
        ),
    )
    return refused or JSONResponse(submission_summary(submission))


@router.get("/inbox")
def read_inbox(session: SessionDep, who: MemberDep) -> dict[str, Any]:
    """The caller's notifications, newest first."""
    return {
        "unread": unread_count(session, who.user_id),
        "data": [
            {
                "subject": n.subject,
                "body": n.body,
                "link": n.link,
                "at": n.created_at.isoformat(),
                "read": n.read_at is not None,
            }
            for n in inbox(session, who.user_id)
        ],
    }


@router.post("/inbox/read", status_code=204)
def read_all(session: SessionDep, who: MemberDep) -> None:
    mark_read(session, who.user_id)
    session.commit()


class DecisionRequest(BaseModel):
    action: str = Field(description="finalize, reject, withdraw or invalidate")
    reason: str | None = Field(default=None, description="required except to finalize")


@router.post("/submissions/{public_id}/decisions")
def decide_submission(
    public_id: str,
    body: DecisionRequest,
    session: SessionDep,
    settings: SettingsDep,
    chair: ChairDep,
    now: NowDep,
) -> JSONResponse:
    """The chair's decision (a token with the ``publish`` scope); recorded in the timeline."""
    submission = submission_or_404(session, public_id)
    failed = attempt(
        session,
        lambda: decide(
            session=session,
            settings=settings,
            submission=submission,
            action=body.action,
            actor=chair.email,
            reason=body.reason,
            at=now,
        ),
    )
    return failed or JSONResponse(submission_summary(submission))


class WithdrawalRequest(BaseModel):
    reason: str = Field(max_length=5000, description="why the submission is withdrawn")


@router.post("/submissions/{public_id}/withdraw")
def withdraw_submission(
    public_id: str,
    body: WithdrawalRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: MemberDep,
    now: NowDep,
) -> JSONResponse:
    """The submitting organisation (or the chair) withdraws the submission, at any time
    (rules §11.7): before finalization it leaves no public record; after, the archive
    keeps it tagged "Withdrawn" with the reason."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    failed = attempt(
        session,
        lambda: withdraw(
            session=session,
            settings=settings,
            submission=submission,
            who=who,
            reason=body.reason,
            at=now,
        ),
    )
    return failed or JSONResponse(submission_summary(submission))


@router.get("/submissions/{public_id}/timeline")
def read_timeline(public_id: str, session: SessionDep, who: PrincipalDep) -> dict[str, Any]:
    """Every state change of the submission: who, when, why (append-only; members only)."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    return {
        "data": [
            {
                "at": e.at.isoformat(),
                "actor": e.actor,
                "action": e.action,
                "from": e.from_state,
                "to": e.to_state,
                "reason": e.reason,
            }
            for e in timeline(session, submission)
        ]
    }


@router.get("/review/queue")
def review_queue(session: SessionDep, settings: SettingsDep, who: ReviewerDep) -> dict[str, Any]:
    """Submissions in review (the committee's token), with their phase, reviewer and
    clocks; ``assigned_to_me`` marks the ones the caller reviews."""
    return {
        "data": [
            {
                **submission_summary(s),
                "review": review_summary(session, settings, s),
                "assigned_to_me": s.reviewer_id == who.user_id,
            }
            for s in in_review(session)
        ]
    }
