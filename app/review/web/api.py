"""/api/v1 for peer review: objections and their threads, reviewer assignment, embargo
changes, per-point states and the inbox (rules §4.2, §4.4, §11.1, §11.4)."""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal, get_user, user_by_email
from app.accounts.services.notifications import Inbox, inbox_view, mark_read
from app.accounts.web.security import PrincipalDep, ReviewerDep, SignedInDep
from app.audit import TimelineEntry, timeline_view
from app.checks.services.checks import retry_check
from app.core import text_limits as text
from app.core.authorization import Action
from app.core.divisions import Availability, Division
from app.core.views import Listing
from app.db.models import Submission, User
from app.publishing.domain.standing import Remedy
from app.publishing.services.previews import preview_facts
from app.review.domain.objections import ObjectionRefused
from app.review.domain.policy import may_recheck
from app.review.services.decisions import decide, in_review, set_point_state, withdraw
from app.review.services.objections import (
    ObjectionTypes,
    ObjectionView,
    act,
    file_objection,
    get_objection,
    objection_types,
    objection_view,
    objections_of,
)
from app.review.services.policy import facts_of
from app.review.services.policy_record import (
    KeptPolicy,
    PolicyView,
    kept_policies,
    kept_policy_view,
    policy_in_force_view,
)
from app.review.services.previews import (
    PreviewView,
    ask_extension,
    decide_extension,
    preview_view,
)
from app.review.services.reachability import EndpointView, endpoint_views, record_reachability
from app.review.services.review import assign_reviewer, change_embargo, complete_review
from app.review.services.summary import (
    QueuedSubmission,
    ReviewSummary,
    review_queue,
    review_summary,
)
from app.settings import Settings, review_clock
from app.submissions.domain.visibility import Access
from app.submissions.services.views import SubmissionSummary, links_of, submission_summary
from app.submissions.web.access import acting_on, visible_submission
from app.web.api_errors import attempt, refused
from app.web.deps import NowDep, QueueDep, SessionDep, SettingsDep

router = APIRouter(prefix="/api/v1", tags=["review: objections, decisions and the inbox"])


def _user(session: SessionDep, who: Principal) -> User:
    user = get_user(session, who.user_id)
    assert user is not None
    return user


@router.get("/review-policy", response_model=PolicyView)
def read_review_policy(session: SessionDep, settings: SettingsDep) -> PolicyView:
    """The review policy in force (rules §15: windows, clocks, penalties, disputes, the late
    window, the point cap, the committee window, audits, the statuses' reading) with its
    digest, which each decision and each version of the record names."""
    return policy_in_force_view(session, settings)


@router.get("/review-policies", response_model=Listing[KeptPolicy])
def read_review_policies(session: SessionDep, settings: SettingsDep) -> Listing[KeptPolicy]:
    """Every review policy a decision or a version of the record named, the earliest
    first: a change applies from then on, and the older ones stay readable."""
    return Listing(data=kept_policies(session, settings))


@router.get("/review-policies/{digest}", response_model=PolicyView)
def read_review_policy_by_digest(
    digest: str, session: SessionDep, settings: SettingsDep
) -> PolicyView:
    """A policy that was in force, by the digest a decision or a version of the record
    names."""
    kept = kept_policy_view(session, settings, digest)
    if kept is None:
        raise HTTPException(404, detail=f"no review policy with digest {digest!r}")
    return kept


@router.get("/submissions/{public_id}/endpoints", response_model=Listing[EndpointView])
def read_endpoints(
    public_id: str, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> Listing[EndpointView]:
    """A Standardized client-over-network result's endpoint, its contact, how long it must
    stay reachable, and the checks recorded (rules §11.10; the review's members)."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    return Listing(data=endpoint_views(session, settings, submission))


class ReachabilityRequest(BaseModel):
    system_dir: str = Field(max_length=text.SHORT)
    reachable: bool
    detail: str = Field(max_length=text.REASON, description="how it was checked")
    checked_on: dt.date


@router.post("/submissions/{public_id}/endpoints/checks", response_model=Listing[EndpointView])
def check_endpoint(
    public_id: str,
    body: ReachabilityRequest,
    session: SessionDep,
    settings: SettingsDep,
    chair: SignedInDep,
    now: NowDep,
) -> Listing[EndpointView] | JSONResponse:
    """The chair records a check of the endpoint; a failed one within the window (90 days
    after publication) tells the chair and the submitter the result is not Available."""
    submission = acting_on(session, chair, public_id, Action.DECIDE)
    failed = attempt(session, lambda: record_reachability(
        session=session, settings=settings, submission=submission, who=chair,
        system_dir=body.system_dir, reachable=body.reachable, detail=body.detail,
        checked_on=body.checked_on, at=now))  # fmt: skip
    return failed or Listing(data=endpoint_views(session, settings, submission))


@router.get("/objection-types", response_model=ObjectionTypes)
def read_objection_types() -> ObjectionTypes:
    """The types of objection, their severity, and the actions on them (rules §11.4)."""
    return objection_types()


class ObjectionRequest(BaseModel):
    type: str = Field(description="one of /api/v1/objection-types")
    title: str = Field(max_length=text.SHORT)
    rule_cited: str = Field(description="the rule section, e.g. 'R §6.2'", max_length=text.SHORT)
    evidence: str = Field(
        description="logs, config values, reproduction attempts", max_length=text.LONG
    )
    point: str | None = Field(
        default=None, max_length=text.SHORT, description="<system>/<model>/r<N>, if about one point"
    )


@router.get("/submissions/{public_id}/objections", response_model=Listing[ObjectionView])
def read_objections(
    public_id: str, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> Listing[ObjectionView]:
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    return Listing(
        data=[objection_view(session, settings, o) for o in objections_of(session, submission)]
    )


@router.post("/submissions/{public_id}/objections", status_code=201, response_model=ObjectionView)
def create_objection(
    public_id: str,
    body: ObjectionRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> ObjectionView | JSONResponse:
    """File an objection (a committee member's token, from another organisation)."""
    submission = acting_on(session, who, public_id, Action.FILE_OBJECTION)
    try:
        objection = file_objection(
            session=session,
            settings=settings,
            submission=submission,
            filer=_user(session, who),
            scopes=who.scopes,
            type_id=body.type,
            title=body.title,
            rule_cited=body.rule_cited,
            evidence=body.evidence,
            point_label=body.point,
            at=now,
        )
    except ObjectionRefused as exc:
        session.rollback()
        return refused(exc)
    session.commit()
    return objection_view(session, settings, objection)


@router.get("/objections/{objection_id}", response_model=ObjectionView)
def read_objection(
    objection_id: str, session: SessionDep, settings: SettingsDep, who: PrincipalDep
) -> ObjectionView:
    objection = get_objection(session, objection_id)
    if objection is None:
        raise HTTPException(404, detail=f"no objection with id {objection_id!r}")
    visible_submission(session, who, objection.submission.public_id, Access.REVIEW)
    return objection_view(session, settings, objection)


class ObjectionAction(BaseModel):
    action: str = Field(
        description="acknowledge, contest, accept, retract, mark_unresolved, resolve, "
        "comment or join"
    )
    body: str = Field(default="", max_length=text.LONG)


@router.post("/objections/{objection_id}/actions", response_model=ObjectionView)
def act_on_objection(
    objection_id: str,
    body: ObjectionAction,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> ObjectionView | JSONResponse:
    """Answer, accept, retract, mark unresolved, resolve (chair), comment or join."""
    objection = get_objection(session, objection_id)
    if objection is None:
        raise HTTPException(404, detail=f"no objection with id {objection_id!r}")
    visible_submission(session, who, objection.submission.public_id, Access.REVIEW)
    acting_on(session, who, objection.submission.public_id, Action.ACT_ON_OBJECTION)
    refused = attempt(
        session,
        lambda: act(
            session=session,
            settings=settings,
            objection=objection,
            user=_user(session, who),
            action=body.action,
            body=body.body,
            scopes=who.scopes,
            at=now,
        ),
    )
    return refused or objection_view(session, settings, objection)


class ReviewerRequest(BaseModel):
    email: str | None = Field(default=None, description="a committee member; at random if absent")


@router.post("/submissions/{public_id}/reviewer", response_model=ReviewSummary)
def reassign_reviewer(
    public_id: str,
    body: ReviewerRequest,
    session: SessionDep,
    settings: SettingsDep,
    chair: SignedInDep,
    now: NowDep,
) -> ReviewSummary | JSONResponse:
    """The chair assigns (or re-draws) the submission's reviewer."""
    submission = acting_on(session, chair, public_id, Action.ASSIGN_REVIEWER)
    chosen = None
    if body.email:
        chosen = user_by_email(session, body.email)
        if chosen is None:
            raise HTTPException(404, detail=f"no user {body.email!r}")
    refused = attempt(
        session,
        lambda: assign_reviewer(
            session, settings, submission, reviewer=chosen, actor=chair.email, at=now
        ),
    )
    return refused or review_summary(session, settings, submission)


class ReviewComplete(BaseModel):
    notes: str = Field(default="", max_length=text.LONG)


@router.post("/submissions/{public_id}/review-complete", response_model=ReviewSummary)
def post_review_complete(
    public_id: str,
    body: ReviewComplete,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> ReviewSummary | JSONResponse:
    """The assigned reviewer's review is done (due by the end of Week 3, rules §4.4)."""
    submission = acting_on(session, who, public_id, Action.COMPLETE_REVIEW)
    refused = attempt(
        session,
        lambda: complete_review(
            session=session, submission=submission, reviewer=who, notes=body.notes, at=now
        ),
    )
    return refused or review_summary(session, settings, submission)


class EmbargoRequest(BaseModel):
    embargo_date: dt.date | None = Field(description="a future date, or null to lift it")


@router.put("/submissions/{public_id}/embargo", response_model=ReviewSummary)
def put_embargo(
    public_id: str,
    body: EmbargoRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> ReviewSummary | JSONResponse:
    """Change the embargo date (the submitting organisation); the committee is told."""
    submission = acting_on(session, who, public_id, Action.CHANGE_EMBARGO)
    refused = attempt(
        session,
        lambda: change_embargo(
            session=session,
            settings=settings,
            submission=submission,
            embargo=body.embargo_date,
            actor=who.email,
            who=who,
            at=now,
        ),
    )
    return refused or review_summary(session, settings, submission)


class ExtensionRequest(BaseModel):
    new_date: dt.date = Field(description="the date the result is to be Available by")
    reason: str = Field(max_length=text.REASON, description="why the extension is needed")


class ExtensionDecision(BaseModel):
    grant: bool
    note: str | None = Field(default=None, max_length=text.REASON)


def _preview(
    session: Session, settings: Settings, submission: Submission, now: dt.datetime
) -> PreviewView:
    facts = preview_facts(session, settings, submission)
    assert facts is not None  # the service refused a submission without a Preview
    return preview_view(facts, review_clock(settings).local_date(now))


@router.post("/submissions/{public_id}/preview-extension", response_model=PreviewView)
def post_preview_extension(
    public_id: str,
    body: ExtensionRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> PreviewView | JSONResponse:
    """Ask for the Preview window's one extension (the submitting organisation; rules
    §11.10: at most 60 days, at least 30 days before expiry); the chair decides."""
    submission = acting_on(session, who, public_id, Action.ASK_PREVIEW_EXTENSION)
    refused = attempt(
        session,
        lambda: ask_extension(session=session, settings=settings, who=who,
                              submission=submission, new_date=body.new_date,
                              reason=body.reason, now=now),
    )  # fmt: skip
    return refused or _preview(session, settings, submission, now)


@router.post("/submissions/{public_id}/preview-extension/decision", response_model=PreviewView)
def post_preview_decision(
    public_id: str,
    body: ExtensionDecision,
    session: SessionDep,
    settings: SettingsDep,
    chair: SignedInDep,
    now: NowDep,
) -> PreviewView | JSONResponse:
    """The chair grants or refuses the extension asked for; a grant moves the result's
    "Available by" date on the record."""
    submission = acting_on(session, chair, public_id, Action.DECIDE_PREVIEW_EXTENSION)
    refused = attempt(
        session,
        lambda: decide_extension(session=session, settings=settings, who=chair,
                                 submission=submission, grant=body.grant, note=body.note,
                                 now=now),
    )  # fmt: skip
    return refused or _preview(session, settings, submission, now)


class PointStateRequest(BaseModel):
    state: str = Field(description="active, withdrawn, disputed or invalidated")
    reason: str = Field(max_length=text.REASON)


@router.post(
    "/submissions/{public_id}/points/{system}/{model}/{point}/state",
    response_model=SubmissionSummary,
)
def put_point_state(
    public_id: str,
    system: str,
    model: str,
    point: str,
    body: PointStateRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> SubmissionSummary | JSONResponse:
    """Withdraw a faulty point in review (its submitter or the chair), hold it in dispute
    or invalidate it after finalization (the chair). It leaves every active curve at once."""
    action = Action.WITHDRAW_POINT if body.state == "withdrawn" else Action.JUDGE_POINT
    submission = acting_on(session, who, public_id, action)
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
    return refused or submission_summary(submission, settings)


@router.get("/inbox", response_model=Inbox)
def read_inbox(session: SessionDep, who: SignedInDep) -> Inbox:
    """The caller's notifications, newest first (anyone signed in: a neutral member acts
    for no organisation)."""
    return inbox_view(session, who.user_id)


@router.post("/inbox/read", status_code=204)
def read_all(session: SessionDep, who: SignedInDep) -> None:
    mark_read(session, who.user_id)
    session.commit()


class DecisionRequest(BaseModel):
    action: str = Field(description="finalize, reject, withdraw, invalidate or reclassify")
    reason: str | None = Field(
        default=None,
        max_length=text.REASON,
        description="required except to finalize (and to finalize with an override)",
    )
    override: bool = Field(
        default=False,
        description="finalize although the assigned review is not complete (rules §4.4): "
        "the reason is recorded on the timeline and sent to the chair's, the reviewer's and "
        "the submitter's inbox; without it, an incomplete review refuses (review-incomplete)",
    )
    undisputed: bool = Field(
        default=False,
        description="finalize the undisputed points: the points that open objections name "
        "are held in dispute (off the curve) where the curves meet the minimum count and "
        "regions without them, and return if the dispute ends in the submitter's favour "
        "(rules §11.6); an open objection on the whole submission still refuses",
    )
    division: Division | None = Field(
        default=None, description="reclassify: the division the result moves to"
    )
    availability: Availability | None = Field(
        default=None,
        description="reclassify: the lower publication status the result moves to (Available "
        "to Preview or RDI, Preview to RDI)",
    )
    target_availability_date: dt.date | None = Field(
        default=None,
        description="reclassify to Preview: the date it will be Available, within its window "
        "(rules §11.10)",
    )
    objection: str | None = Field(
        default=None,
        max_length=text.SHORT,
        description="reclassify: the id of the submission's open objection this decision "
        "upholds (it is resolved with this outcome)",
    )


@router.post("/submissions/{public_id}/decisions", response_model=SubmissionSummary)
def decide_submission(
    public_id: str,
    body: DecisionRequest,
    session: SessionDep,
    settings: SettingsDep,
    chair: SignedInDep,
    now: NowDep,
) -> SubmissionSummary | JSONResponse:
    """The chair's decision (a token with the ``publish`` scope); recorded in the timeline."""
    action = Action.WITHDRAW if body.action == "withdraw" else Action.DECIDE
    submission = acting_on(session, chair, public_id, action)
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
            override=body.override,
            remedy=Remedy(body.division, body.availability, body.target_availability_date),
            objection=body.objection,
            undisputed=body.undisputed,
        ),
    )
    return failed or submission_summary(submission, settings)


class WithdrawalRequest(BaseModel):
    reason: str = Field(max_length=text.REASON, description="why the submission is withdrawn")


@router.post("/submissions/{public_id}/withdraw", response_model=SubmissionSummary)
def withdraw_submission(
    public_id: str,
    body: WithdrawalRequest,
    session: SessionDep,
    settings: SettingsDep,
    who: SignedInDep,
    now: NowDep,
) -> SubmissionSummary | JSONResponse:
    """The submitting organisation (or the chair) withdraws the submission, at any time
    (rules §11.7): before finalization it leaves no public record; after, the archive
    keeps it tagged "Withdrawn" with the reason."""
    submission = acting_on(session, who, public_id, Action.WITHDRAW)
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
    return failed or submission_summary(submission, settings)


@router.get("/submissions/{public_id}/timeline", response_model=Listing[TimelineEntry])
def read_timeline(public_id: str, session: SessionDep, who: PrincipalDep) -> Listing[TimelineEntry]:
    """Every state change of the submission: who, when, why (append-only; members only)."""
    submission = visible_submission(session, who, public_id, Access.REVIEW)
    return Listing(data=timeline_view(session, submission))


@router.get("/review/queue", response_model=Listing[QueuedSubmission])
def read_review_queue(
    session: SessionDep, settings: SettingsDep, who: ReviewerDep
) -> Listing[QueuedSubmission]:
    """Submissions in review (the committee's token), with their phase, reviewer and
    clocks; ``assigned_to_me`` marks the ones the caller reviews."""
    return Listing(data=review_queue(session, settings, in_review(session), who.user_id))


class Requeued(BaseModel):
    queued: bool
    links: dict[str, str]


@router.post("/submissions/{public_id}/checks", status_code=202, response_model=Requeued)
def recheck_submission(
    public_id: str, session: SessionDep, queue: QueueDep, who: SignedInDep
) -> Requeued | JSONResponse:
    """Run the checks again: after a check error, or (a checker upgrade, say) before
    anything of the submission is reviewed or public. A rejected submission is final."""
    submission = acting_on(session, who, public_id, Action.RECHECK)
    refusal = may_recheck(facts_of(session, submission))
    if refusal is not None:
        return refused(refusal.refused())
    retry_check(session=session, queue=queue, submission=submission)
    session.commit()
    return Requeued(queued=True, links=links_of(public_id))
