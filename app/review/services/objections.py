"""Filing objections and acting on them (rules §11.4), with their threads, clocks and
notifications; the penalties of unanswered ones are the review clocks' (review.py)."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import chairs, members_of, notify
from app.audit import SYSTEM, record
from app.core.authorization import Action, Actor, Scope, may
from app.core.lifecycle import ObjectionState, PointState, SubmissionState
from app.core.refusals import Kind
from app.core.times import local_text
from app.core.views import Timestamp
from app.db.models import Objection, ObjectionMessage, Organization, Submission, User, utcnow
from app.publishing.services.standing import similar_systems
from app.review.domain.objections import (
    ACTIONS,
    CLOSED,
    FILED,
    TYPES,
    ObjectionRefused,
    Party,
    apply,
    told,
)
from app.review.domain.policy import may_act_on_objections, may_object
from app.review.services.clocks import submitter_clock
from app.review.services.policy import facts_of
from app.review.services.review import keep_record, late_window, on_committee
from app.settings import Settings, review_clock
from app.submissions.services.points import find_point


def _refuse(code: str, message: str, kind: Kind = Kind.CONFLICT) -> ObjectionRefused:
    return ObjectionRefused(code, message, kind)


def _committee_member(user: User) -> bool:
    """Objectors hear of their objection while they can review (rules §4.4)."""
    return actor_of(user, None).committee


def file_objection(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    filer: User,
    scopes: frozenset[Scope] | None = None,
    type_id: str,
    title: str,
    rule_cited: str,
    evidence: str,
    point_label: str | None = None,
    at: dt.datetime | None = None,
) -> Objection:
    """A committee member objects, citing the rule and the evidence (rules §11.4).

    New objections are taken during peer review (Weeks 1–3); after Week 6, and for 90
    days after finalization, only on the late grounds (rules §11.5). *scopes*: the
    caller's token's (None: every scope the filer's role has)."""
    at = at or utcnow()
    if (refusal := may(actor_of(filer, submission, scopes), Action.FILE_OBJECTION)) is not None:
        raise _refuse(refusal.code, refusal.message, refusal.kind)
    kind = TYPES.get(type_id)
    if kind is None:
        raise _refuse("bad-type", f"the type must be one of {', '.join(TYPES)}", Kind.INVALID)
    for name, value in (("title", title), ("rule_cited", rule_cited), ("evidence", evidence)):
        if not value.strip():
            raise _refuse(
                f"{name.replace('_', '-')}-required", f"an objection needs its {name}", Kind.INVALID
            )
    if point_label and find_point(submission, point_label) is None:
        raise _refuse("unknown-point", f"no point {point_label!r} in this submission", Kind.INVALID)
    _check_window(session, settings, submission, kind.late_ground, kind.title, at,
                  on_committee(session, settings, filer.organization, at))  # fmt: skip
    if kind.superseded_by_newer and submission.finalized_at is not None:
        newer = newer_similar_result(session, submission)
        if newer is not None:
            raise _refuse(
                "superseded",
                f"a newer finalized result on a similar system ({newer.public_id[:8]}) "
                f"supersedes {kind.title.lower()} concerns about this one (rules §11.5)",
            )
    objection = Objection(
        submission=submission,
        point_label=point_label or None,
        type=kind.id,
        severity=kind.severity,
        title=title.strip(),
        rule_cited=rule_cited.strip(),
        evidence=evidence.strip(),
        filed_by=filer,
        by_organizations=[filer.organization_id],
        state=ObjectionState.OPEN.value,
        filed_at=at,
    )
    objection.messages.append(_message(filer, FILED, evidence.strip(), at))
    session.add(objection)
    session.flush()
    clock = submitter_clock(settings, submission)
    due = clock.business_deadline(at, clock.rules.submitter_business_days)
    record(
        session,
        submission,
        action="objection filed",
        actor=filer.email,
        reason=f"{kind.title} ({kind.severity}): {objection.title}",
        at=at,
    )
    notify(
        session,
        [*members_of(session, submission.organization_id), *chairs(session)]
        + ([submission.reviewer] if submission.reviewer else []),
        f"Objection filed: {objection.title}",
        f"{kind.title}, severity {kind.severity}, citing {objection.rule_cited}. The submitter "
        f"must answer by {local_text(due, settings.cohort_timezone)} (rules §11.3).",
        f"/submissions/{submission.public_id}#objection-{objection.public_id}",
    )
    return objection


def newer_similar_result(session: Session, submission: Submission) -> Submission | None:
    """The organisation's newest result finalized after *submission* on a similar system,
    if any (rules §11.5; the portal reads "newer" as the same organisation's)."""
    if submission.finalized_at is None:
        return None
    mine = similar_systems(submission)
    newer = session.scalars(
        select(Submission)
        .where(
            Submission.organization_id == submission.organization_id,
            Submission.state == SubmissionState.FINALIZED.value,
            Submission.finalized_at > submission.finalized_at,
        )
        .order_by(Submission.finalized_at.desc())
    )
    return next((row for row in newer if mine & similar_systems(row)), None)


def _check_window(
    session: Session,
    settings: Settings,
    submission: Submission,
    late_ground: bool,
    title: str,
    at: dt.datetime,
    seated: bool,
) -> None:
    refusal = may_object(
        review_clock(settings), facts_of(session, submission), at,
        late_ground=late_ground, ground=title, on_committee=seated,
        late=late_window(session, settings),
    )  # fmt: skip
    if refusal is not None:
        raise _refuse(refusal.code, refusal.message, refusal.kind)


def _message(user: User | None, action: str, body: str, at: dt.datetime) -> ObjectionMessage:
    org = user.organization.name if user is not None and user.organization else None
    return ObjectionMessage(
        author=user.email if user else "system", organization=org, action=action, body=body, at=at
    )


def parties_of(who: Actor, user: User, objection: Objection) -> frozenset[Party]:
    """The sides *user* takes in *objection*, as far as the caller's scopes (*who*) reach."""
    if may(who, Action.ACT_ON_OBJECTION) is not None:
        return frozenset()
    parties: set[Party] = set()
    if who.own_organization:
        parties.add(Party.SUBMITTER)
    elif who.committee:
        parties.add(Party.COMMITTEE)
        if user.organization_id in objection.by_organizations:
            parties.add(Party.OBJECTOR)
    if who.chair:
        parties.add(Party.CHAIR)
    return frozenset(parties)


def _refusal_beyond_the_table(
    action: str, user: User, objection: Objection
) -> ObjectionRefused | None:
    """What the action table cannot know: who already objects."""
    if action == "join" and user.organization_id in objection.by_organizations:
        return _refuse("joined", "your organisation is already among the objectors")
    return None


def offered_actions(
    session: Session,
    objection: Objection,
    user: User | None,
    scopes: frozenset[Scope] | None = None,
) -> list[str]:
    """The actions *user* may take on *objection* now: exactly those `act` would take."""
    if user is None or may_act_on_objections(facts_of(session, objection.submission)):
        return []
    parties = parties_of(actor_of(user, objection.submission, scopes), user, objection)
    state = ObjectionState(objection.state)
    offered = []
    for action in ACTIONS.values():
        try:
            apply(action.id, state, parties, "(a body)")
        except ObjectionRefused:
            continue
        if _refusal_beyond_the_table(action.id, user, objection) is None:
            offered.append(action.id)
    return offered


def act(
    *,
    session: Session,
    settings: Settings,
    objection: Objection,
    user: User,
    action: str,
    body: str = "",
    scopes: frozenset[Scope] | None = None,
    at: dt.datetime | None = None,
) -> Objection:
    """*user* takes *action*; *scopes*: the caller's token's (None: its role's)."""
    at = at or utcnow()
    submission = objection.submission
    closed = may_act_on_objections(facts_of(session, submission))
    if closed is not None:
        raise _refuse(closed.code, closed.message, closed.kind)
    parties = parties_of(actor_of(user, submission, scopes), user, objection)
    taken = apply(action, ObjectionState(objection.state), parties, body)
    if (refusal := _refusal_beyond_the_table(action, user, objection)) is not None:
        raise refusal
    if action == "join":
        assert user.organization_id is not None  # parties_of made them an objector's org
        objection.by_organizations = [*objection.by_organizations, user.organization_id]
    if action in ("acknowledge", "contest"):
        objection.submitter_answered_at = objection.submitter_answered_at or at
        clock = submitter_clock(settings, submission)
        objection.objector_due_at = clock.business_deadline(at, clock.rules.objector_business_days)
    elif action in ("mark_unresolved", "validation_schedule"):
        # The objectors answered: their silence no longer retracts (rules §11.3).
        objection.objector_due_at = None
    if taken.to_state is not None:
        objection.state = taken.to_state
        if taken.to_state in CLOSED:
            objection.closed_at = at
    objection.messages.append(_message(user, action, body.strip() or action, at))
    if taken.to_state in CLOSED:
        settle_point(session, settings, objection, at, upheld=action == "uphold")
    record(
        session,
        submission,
        action=f"objection {told(action)}",
        actor=user.email,
        reason=f"{objection.title}: {objection.state}",
        at=at,
    )
    _tell_the_other_side(session, objection, user, action)
    session.flush()
    return objection


def settle_point(
    session: Session, settings: Settings, objection: Objection, at: dt.datetime, *, upheld: bool
) -> None:
    """The point *objection* names, once the last open objection on it has closed: an
    upheld one withdraws it (faulty, rules §11.7) in review or held in dispute; any other
    end returns a point held in dispute to its curve, republished from the next cohort
    (rules §11.6)."""
    submission = objection.submission
    label = objection.point_label
    point = find_point(submission, label) if label else None
    if point is None or point.state not in (PointState.ACTIVE, PointState.DISPUTED):
        return
    if any(
        o.point_label == label and ObjectionState(o.state) not in CLOSED
        for o in objections_of(session, submission)
    ):
        return
    finalized = submission.state == SubmissionState.FINALIZED
    if upheld and finalized and point.state == PointState.ACTIVE:
        return  # on the record: the chair invalidates it, keeping the curve's minimum
    if upheld:
        after, why = PointState.WITHDRAWN, f"the objection on it was upheld: {objection.title}"
    elif point.state == PointState.DISPUTED:
        after, why = PointState.ACTIVE, "the dispute over it ended in the submitter's favour"
    else:
        return
    record(session, submission, action="point state", actor=SYSTEM,
           reason=f"{label}: {point.state} → {after}: {why}", at=at)  # fmt: skip
    point.state, point.state_reason = after, why
    session.flush()
    keep_record(session, settings, submission, at, why=f"{label} {after}")


def uphold(
    session: Session, objection: Objection, *, by: str, outcome: str, at: dt.datetime
) -> None:
    """The chair closes *objection* with the remedy it led to (rules §11.6): resolved,
    the outcome the thread's last word. Refused on a closed objection."""
    if ObjectionState(objection.state) in CLOSED:
        raise _refuse("objection-closed", f"the objection is {objection.state} already")
    objection.state = ObjectionState.RESOLVED
    objection.closed_at = at
    objection.messages.append(
        ObjectionMessage(author=by, organization=None, action="uphold", body=outcome, at=at)
    )


def _tell_the_other_side(session: Session, objection: Objection, user: User, action: str) -> None:
    submission = objection.submission
    objectors = [
        u
        for org_id in objection.by_organizations
        for u in members_of(session, org_id)
        if _committee_member(u)
    ]
    people = [*members_of(session, submission.organization_id), *objectors, *chairs(session)]
    notify(
        session,
        [p for p in people if p.id != user.id],
        f"Objection {told(action)}: {objection.title}",
        f"{user.email} {told(action)}; the objection is now {objection.state}.",
        f"/submissions/{submission.public_id}#objection-{objection.public_id}",
    )


def objections_of(session: Session, submission: Submission) -> list[Objection]:
    return list(
        session.scalars(
            select(Objection).where(Objection.submission_id == submission.id).order_by(Objection.id)
        )
    )


def get_objection(session: Session, public_id: str) -> Objection | None:
    return session.scalar(select(Objection).where(Objection.public_id == public_id))


class ThreadMessage(BaseModel):
    author: str
    organization: str | None
    action: str
    told: str = Field(description="the action as the thread tells it")
    body: str
    at: Timestamp


class ObjectionView(BaseModel):
    """An objection with its thread and its clocks (rules §11.4)."""

    id: str
    submission: str
    point: str | None = Field(description="<system>/<model>/r<N>, if about one point")
    type: str
    type_title: str
    severity: str = Field(description="high, medium or low")
    blocks_finalization: bool
    title: str
    rule_cited: str
    evidence: str
    state: ObjectionState
    by: list[str] = Field(description="the objecting organisations")
    against: str = Field(description="the submitting organisation")
    filed_by: str
    filed_at: Timestamp
    submitter_due_at: Timestamp | None = Field(description="the submitter's answer is due")
    objector_due_at: Timestamp | None = Field(description="answered: the objector's reply is due")
    penalty_level: int
    closed_at: Timestamp | None
    thread: list[ThreadMessage]


def objection_view(session: Session, settings: Settings, objection: Objection) -> ObjectionView:
    clock = submitter_clock(settings, objection.submission)
    orgs = {
        o.id: o.name
        for o in session.scalars(
            select(Organization).where(Organization.id.in_(objection.by_organizations))
        )
    }
    submitter_due = (
        None
        if objection.submitter_answered_at is not None or objection.state in CLOSED
        else clock.business_deadline(objection.filed_at, clock.rules.submitter_business_days)
    )
    return ObjectionView(
        id=objection.public_id,
        submission=objection.submission.public_id,
        point=objection.point_label,
        type=objection.type,
        type_title=TYPES[objection.type].title,
        severity=objection.severity,
        blocks_finalization=TYPES[objection.type].blocks_finalization,
        title=objection.title,
        rule_cited=objection.rule_cited,
        evidence=objection.evidence,
        state=objection.state,
        by=[orgs.get(i, str(i)) for i in objection.by_organizations],
        against=objection.submission.organization.name,
        filed_by=objection.filed_by.email,
        filed_at=objection.filed_at,
        submitter_due_at=submitter_due,
        objector_due_at=objection.objector_due_at
        if objection.objector_due_at and objection.state == ObjectionState.ANSWERED
        else None,
        penalty_level=objection.penalty_level,
        closed_at=objection.closed_at,
        thread=[
            ThreadMessage(
                author=m.author,
                organization=m.organization,
                action=m.action,
                told=told(m.action),
                body=m.body,
                at=m.at,
            )
            for m in objection.messages
        ],
    )


class ObjectionTypeView(BaseModel):
    id: str
    title: str
    severity: str
    blocks_finalization: bool
    late_ground: bool = Field(description="may ground a late objection (rules §11.5)")


class ActionView(BaseModel):
    id: str
    by: list[str] = Field(description="the parties who may take it")
    needs_body: bool


class ObjectionTypes(BaseModel):
    types: list[ObjectionTypeView]
    actions: list[ActionView]


def objection_types() -> ObjectionTypes:
    """The types of objection, their severity, and the actions on them (rules §11.4)."""
    return ObjectionTypes(
        types=[
            ObjectionTypeView(
                id=t.id,
                title=t.title,
                severity=t.severity,
                blocks_finalization=t.blocks_finalization,
                late_ground=t.late_ground,
            )
            for t in TYPES.values()
        ],
        actions=[
            ActionView(id=a.id, by=sorted(p.value for p in a.parties), needs_body=a.needs_body)
            for a in ACTIONS.values()
        ],
    )
