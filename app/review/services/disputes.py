"""Dispute resolution over stored submissions (rules §11.6): opened by the review clock
when Week 6 closes with objections open; certified by the chair with a panel of neutral
members; the parties' statements; the panel's recommendation; the chair's one
extension and binding ruling, which closes the disputed objections; an appeal. The
clock lapses a silent objector's objections, withdraws a silent submitter, and tells the
chair of each missed deadline once. The deadlines are ``app.review.domain.disputes``'s.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal, get_user, user_by_email
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import chairs, members_of, notify
from app.audit import SYSTEM, policy_in_force, record
from app.core.authorization import Role
from app.core.clocks import ReviewClock
from app.core.lifecycle import ObjectionState, SubmissionState
from app.core.refusals import Kind, Refusal, Refused
from app.core.views import Timestamp
from app.db.models import (
    Dispute,
    DisputeStatement,
    Objection,
    ObjectionMessage,
    Submission,
    User,
)
from app.review.domain.disputes import (
    Deadlines,
    DisputeFacts,
    Recommendation,
    Ruling,
    deadlines,
    may_appeal,
    may_certify,
    may_extend,
    may_recommend,
    may_rule,
)
from app.review.services.clocks import submitter_clock
from app.review.services.objections import act, settle_point
from app.review.services.review import (
    blocking_objections,
    first_time,
    label_of,
    link_of,
    withdraw_by_rule,
)
from app.settings import Settings, review_policy


class DisputeRefused(Refused):
    default_kind = Kind.CONFLICT


def _enforce(refusal: Refusal | None) -> None:
    if refusal is not None:
        raise DisputeRefused(refusal.code, refusal.message, refusal.kind)


def dispute_of(session: Session, submission: Submission) -> Dispute | None:
    """The submission's current dispute: its latest (the review's, or one of late
    objections after finalization)."""
    return session.scalar(
        select(Dispute)
        .where(Dispute.submission_id == submission.id)
        .order_by(Dispute.id.desc())
        .limit(1)
    )


def facts_of_dispute(dispute: Dispute | None) -> DisputeFacts | None:
    if dispute is None:
        return None
    return DisputeFacts(
        opened_at=dispute.opened_at,
        certified_at=dispute.certified_at,
        convened_at=dispute.convened_at,
        recommended_at=dispute.recommended_at,
        recommendation=dispute.recommendation,
        extended=dispute.extended_at is not None,
        decided_at=dispute.decided_at,
        appealed_at=dispute.appealed_at,
    )


def _deadlines(settings: Settings, dispute: Dispute) -> Deadlines:
    clock = submitter_clock(settings, dispute.submission)
    facts = facts_of_dispute(dispute)
    assert facts is not None
    return deadlines(clock, facts, review_policy(settings).disputes)


def open_dispute(session: Session, submission: Submission, at: dt.datetime) -> Dispute:
    """The dispute of a submission whose Week 6 closed with objections open (once)."""
    found = dispute_of(session, submission)
    if found is None:
        found = Dispute(submission=submission, opened_at=at, panel=[])
        session.add(found)
        session.flush()
    return found


def open_late_dispute(session: Session, submission: Submission, at: dt.datetime) -> Dispute | None:
    """Late objections open after finalization are handled by a dispute (rules §11.5):
    a new one when none is undecided (the chair is told to certify it), None when the
    current one takes them in."""
    current = dispute_of(session, submission)
    if current is not None and current.decided_at is None:
        return None
    late = Dispute(submission=submission, opened_at=at, panel=[])
    session.add(late)
    session.flush()
    record(session, submission, action="dispute opened", at=at,
           reason="late objections after finalization (rules §11.5)")  # fmt: skip
    notify(session, chairs(session), f"Dispute (late objections): {label_of(submission)}",
           "Late objections are open on a finalized result; certify them and name a panel "
           "within 2 business days (rules §11.5, §11.6).", link_of(submission))  # fmt: skip
    return late


def is_late(dispute: Dispute) -> bool:
    """Opened after the submission was finalized (late objections), not at Week 6."""
    finalized = dispute.submission.finalized_at
    return finalized is not None and dispute.opened_at >= finalized


def _objector_organisations(session: Session, submission: Submission) -> set[int]:
    return {org for o in blocking_objections(session, submission) for org in o.by_organizations}


def _parties(session: Session, submission: Submission) -> list[User]:
    members = [*members_of(session, submission.organization_id)]
    for org in sorted(_objector_organisations(session, submission)):
        members += members_of(session, org)
    return members


def _require(dispute: Dispute | None) -> Dispute:
    if dispute is None:
        raise DisputeRefused(
            "no-dispute", "objections become a dispute when Week 6 closes with them open"
        )
    return dispute


def certify(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    who: Principal,
    panel: list[str],
    at: dt.datetime,
) -> Dispute:
    """The chair certifies the open objections and names the panel of neutral members;
    the parties are told, and their statements are due."""
    dispute = dispute_of(session, submission)
    _enforce(may_certify(actor_of(who, submission), facts_of_dispute(dispute), len(panel)))
    dispute = _require(dispute)
    members = []
    for email in panel:
        user = user_by_email(session, email)
        if user is None or user.role != Role.NEUTRAL or not user.is_active:
            raise DisputeRefused(
                "not-neutral", f"{email} is not an active neutral member", Kind.INVALID
            )
        members.append(user)
    dispute.certified_at, dispute.certified_by = at, who.email
    dispute.panel = [u.id for u in members]
    due = _deadlines(settings, dispute)
    assert due.statements_by is not None
    said = f"panel {', '.join(u.email for u in members)}; statements due {due.statements_by}"
    record(session, submission, action="dispute certified", actor=who.email, reason=said, at=at)
    notify(session, [*_parties(session, submission), *members],
           f"Dispute certified: {label_of(submission)}",
           f"Written statements are due by {due.statements_by:%Y-%m-%d %H:%M %Z} (rules §11.6).",
           link_of(submission))  # fmt: skip
    session.flush()
    return dispute


def file_statement(
    *,
    session: Session,
    submission: Submission,
    who: Principal,
    body: str,
    at: dt.datetime,
) -> DisputeStatement:
    """A party's written statement: the submitting organisation's or an objector's."""
    dispute = _require(dispute_of(session, submission))
    if dispute.certified_at is None or dispute.decided_at is not None:
        raise DisputeRefused("not-open", "statements are filed between certification and ruling")
    party = _statement_party(session, submission, who)
    if party is None:
        raise DisputeRefused(
            "not-a-party", "only the submitter or an objector files a statement", Kind.FORBIDDEN
        )
    if not body.strip():
        raise DisputeRefused("body-required", "a statement needs its text", Kind.INVALID)
    org = who.organization_id
    assert org is not None
    statement = DisputeStatement(
        organization_id=org, party=party, author=who.email, body=body.strip(), at=at
    )
    dispute.statements.append(statement)
    record(session, submission, action="dispute statement", actor=who.email,
           reason=f"the {party}'s statement", at=at)  # fmt: skip
    session.flush()
    return statement


@dataclass(frozen=True)
class StepFields:
    """What a step of a dispute is taken with (each step reads its own)."""

    panel: tuple[str, ...] = ()
    body: str = ""  # a statement, or the panel's note
    recommendation: str = ""
    ruling: str = ""
    reason: str = ""


def take_step(
    step: str,
    fields: StepFields,
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    who: Principal,
    at: dt.datetime,
) -> object:
    """One step of the dispute by name, as the API's routes and the page's form take it."""
    calls: dict[str, Callable[[], object]] = {
        "certification": lambda: certify(session=session, settings=settings,
                                         submission=submission, who=who,
                                         panel=list(fields.panel), at=at),
        "statements": lambda: file_statement(session=session, submission=submission, who=who,
                                             body=fields.body, at=at),
        "recommendation": lambda: recommend(session=session, submission=submission, who=who,
                                            recommendation=fields.recommendation,
                                            note=fields.body, at=at),
        "extension": lambda: extend(session=session, submission=submission, who=who,
                                    reason=fields.reason, at=at),
        "ruling": lambda: rule(session=session, settings=settings, submission=submission,
                               who=who, ruling=fields.ruling, reason=fields.reason, at=at),
        "appeal": lambda: appeal(session=session, settings=settings, submission=submission,
                                 who=who, reason=fields.reason, at=at),
    }  # fmt: skip
    if step not in calls:
        raise DisputeRefused("bad-step", f"a dispute's step is one of {', '.join(calls)}",
                             Kind.NOT_FOUND)  # fmt: skip
    return calls[step]()


def _statement_party(session: Session, submission: Submission, who: Principal) -> str | None:
    """Whose statement *who* would file: the submitter's, an open objection's objector's."""
    org = who.organization_id
    if org is not None and org == submission.organization_id:
        return "submitter"
    if org is not None and org in _objector_organisations(session, submission):
        return "objector"
    return None


def recommend(
    *,
    session: Session,
    submission: Submission,
    who: Principal,
    recommendation: str,
    note: str,
    at: dt.datetime,
) -> Dispute:
    """The panel's recommendation (its first one convenes it): uphold, dismiss, or
    investigate (the chair may then extend once)."""
    dispute = _require(dispute_of(session, submission))
    _enforce(may_recommend(who.user_id in dispute.panel, facts_of_dispute(dispute)))
    if recommendation not in tuple(Recommendation):
        raise DisputeRefused(
            "bad-recommendation", f"one of {', '.join(Recommendation)}", Kind.INVALID
        )
    if not note.strip():
        raise DisputeRefused("note-required", "say why", Kind.INVALID)
    dispute.convened_at = dispute.convened_at or at
    dispute.recommendation, dispute.recommendation_note = recommendation, note.strip()
    dispute.recommended_at = at
    record(session, submission, action="dispute recommendation", actor=who.email,
           reason=f"{recommendation}: {note.strip()}", at=at)  # fmt: skip
    notify(session, chairs(session), f"Panel recommends {recommendation}: "
           f"{label_of(submission)}", note.strip(), link_of(submission))  # fmt: skip
    session.flush()
    return dispute


def extend(
    *, session: Session, submission: Submission, who: Principal, reason: str, at: dt.datetime
) -> Dispute:
    """The one extension, for the investigation the panel asked for."""
    dispute = dispute_of(session, submission)
    _enforce(may_extend(actor_of(who, submission), facts_of_dispute(dispute)))
    dispute = _require(dispute)
    dispute.extended_at = at
    record(session, submission, action="dispute extended", actor=who.email, reason=reason, at=at)
    session.flush()
    return dispute


def rule(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    who: Principal,
    ruling: str,
    reason: str,
    at: dt.datetime,
) -> Dispute:
    """The chair's binding decision on the disputed objections: each is upheld or
    resolved (dismissed) with *reason*; the remedies beyond it (a reclassification, a
    point or the submission withdrawn) are the chair's decisions. After the backstop the
    chair decides on the record without waiting for the panel."""
    dispute = dispute_of(session, submission)
    clock = submitter_clock(settings, submission)
    _enforce(may_rule(actor_of(who, submission), facts_of_dispute(dispute),
                      backstop_passed(clock, dispute, at)))  # fmt: skip
    dispute = _require(dispute)
    if ruling not in tuple(Ruling):
        raise DisputeRefused("bad-ruling", f"one of {', '.join(Ruling)}", Kind.INVALID)
    if not reason.strip():
        raise DisputeRefused("reason-required", "say why", Kind.INVALID)
    chair = get_user(session, who.user_id)
    assert chair is not None
    action = "uphold" if ruling == Ruling.UPHOLD else "resolve"
    for objection in blocking_objections(session, submission):
        act(session=session, settings=settings, objection=objection, user=chair, action=action,
            body=f"Dispute ruling: {reason.strip()}", scopes=who.scopes, at=at)  # fmt: skip
    dispute.ruling, dispute.ruling_reason, dispute.decided_at = ruling, reason.strip(), at
    due = _deadlines(settings, dispute)
    record(session, submission, action="dispute ruling", actor=who.email,
           reason=f"{ruling}: {reason.strip()}; appeal by {due.appeal_by}", at=at,
           policy=policy_in_force(session, settings))  # fmt: skip
    notify(session, _parties(session, submission), f"Dispute decided ({ruling}): "
           f"{label_of(submission)}", reason.strip(), link_of(submission))  # fmt: skip
    session.flush()
    return dispute


def appeal(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    who: Principal,
    reason: str,
    at: dt.datetime,
) -> Dispute:
    """A party appeals the ruling to the Head of MLPerf, within 14 days (final there)."""
    dispute = _require(dispute_of(session, submission))
    party = _is_party(session, submission, who)
    appeal_by = _deadlines(settings, dispute).appeal_by
    _enforce(may_appeal(party, facts_of_dispute(dispute), at, appeal_by))
    if not reason.strip():
        raise DisputeRefused("reason-required", "say why", Kind.INVALID)
    dispute.appealed_at, dispute.appealed_by, dispute.appeal_reason = at, who.email, reason
    record(session, submission, action="dispute appealed", actor=who.email, reason=reason, at=at)
    notify(session, chairs(session), f"Dispute appealed: {label_of(submission)}", reason,
           link_of(submission))  # fmt: skip
    session.flush()
    return dispute


def _ruled_objectors(session: Session, submission: Submission) -> set[int]:
    """The organisations behind the objections a dispute ruled on (closed by then)."""
    rows = session.scalars(select(Objection).where(Objection.submission_id == submission.id))
    return {org for o in rows for org in o.by_organizations}


def backstop_passed(clock: ReviewClock, dispute: Dispute | None, now: dt.datetime) -> bool:
    """Past the backstop the chair decides on the record: 8 weeks after Week 6 closed, or
    after a late dispute opened."""
    if dispute is None:
        return False
    submission = dispute.submission
    if is_late(dispute) or submission.review_eligible_at is None:
        start = dispute.opened_at
    else:
        start = clock.resolution_closes(submission.review_eligible_at)
    return now > start + dt.timedelta(weeks=clock.rules.dispute_backstop_weeks)


def _is_party(session: Session, submission: Submission, who: Principal) -> bool:
    org = who.organization_id
    return org is not None and (
        org == submission.organization_id or org in _ruled_objectors(session, submission)
    )


def offered_steps(
    session: Session,
    settings: Settings,
    submission: Submission,
    who: Principal | None,
    now: dt.datetime,
) -> list[str]:
    """The dispute's steps *who* may take now, as its forms name them: what the services
    above would allow (the same predicates)."""
    dispute = dispute_of(session, submission)
    if who is None or dispute is None:
        return []
    facts = facts_of_dispute(dispute)
    assert facts is not None
    asking = actor_of(who, submission)
    clock = submitter_clock(settings, submission)
    party = _is_party(session, submission, who)
    open_for_statements = facts.certified_at is not None and facts.decided_at is None
    steps = {
        "certification": may_certify(asking, facts, 1) is None,
        "statements": open_for_statements
        and _statement_party(session, submission, who) is not None,
        "recommendation": facts.certified_at is not None
        and may_recommend(who.user_id in dispute.panel, facts) is None,
        "extension": may_extend(asking, facts) is None,
        "ruling": may_rule(asking, facts, backstop_passed(clock, dispute, now)) is None,
        "appeal": may_appeal(party, facts, now, _deadlines(settings, dispute).appeal_by) is None,
    }
    return [step for step, offered in steps.items() if offered]


# --- the clock -------------------------------------------------------------------------------


def tick_dispute(
    session: Session, settings: Settings, submission: Submission, now: dt.datetime
) -> list[str]:
    """The dispute's clock at *now*: past the statements' deadline a silent objector's
    objections lapse, and 10 business days on a silent submitter is withdrawn; each
    other deadline missed tells the chair once. Returns what it did."""
    dispute = open_dispute(session, submission, now)
    due = _deadlines(settings, dispute)
    done: list[str] = []
    if dispute.decided_at is not None:
        return done
    if due.statements_by is not None and now > due.statements_by:
        filed = {s.organization_id for s in dispute.statements}
        for objection in blocking_objections(session, submission):
            if not filed & set(objection.by_organizations):
                _lapse(session, settings, objection, now)
                done.append(f"objection {objection.public_id[:8]} lapsed")
        withdrawn_at = due.silent_submitter_withdrawn_at
        if submission.organization_id not in filed and withdrawn_at and now > withdrawn_at:
            withdraw_by_rule(session, settings, submission,
                             "no statement in the dispute, 10 business days past its deadline "
                             "(rules §11.6)", now)  # fmt: skip
            return [*done, "withdrawn: no statement"]
    late = [
        (due.certify_by if dispute.certified_at is None else None, "certify the dispute"),
        (due.convene_by if dispute.convened_at is None else None, "convene the panel"),
        (due.recommend_by if dispute.recommended_at is None else None, "the panel's word"),
        (due.decide_by, "decide the dispute"),
    ]
    for deadline, step in late:
        if (
            deadline is not None
            and now > deadline
            and first_time(session, submission, "dispute overdue", step)
        ):
            record(session, submission, action="dispute overdue", reason=step, at=now)
            notify(session, chairs(session), f"Dispute overdue ({step}): {label_of(submission)}",
                   f"due {deadline:%Y-%m-%d}", link_of(submission))  # fmt: skip
            done.append(f"overdue: {step}")
    return done


def tick_late_disputes(session: Session, settings: Settings, now: dt.datetime) -> list[str]:
    """Late objections open on a finalized result (rules §11.5) become a dispute, whose
    clock runs as the review's does; a result with none open is left alone."""
    done: list[str] = []
    finalized = session.scalars(
        select(Submission)
        .where(
            Submission.state == SubmissionState.FINALIZED.value,
            Submission.id.in_(select(Objection.submission_id)),
        )
        .order_by(Submission.id)
    ).all()
    for submission in finalized:
        if not blocking_objections(session, submission):
            continue
        if open_late_dispute(session, submission, now) is not None:
            done.append(f"{label_of(submission)}: dispute opened (late objections)")
        done += [f"{label_of(submission)}: {d}"
                 for d in tick_dispute(session, settings, submission, now)]  # fmt: skip
    return done


def _lapse(session: Session, settings: Settings, objection: Objection, now: dt.datetime) -> None:
    objection.state = ObjectionState.RETRACTED
    objection.closed_at = now
    text = "Lapsed: the objectors filed no statement in the dispute (rules §11.6)."
    objection.messages.append(ObjectionMessage(author=SYSTEM, action="lapse", body=text, at=now))
    record(session, objection.submission, action="objection lapsed", reason=text, at=now)
    settle_point(session, settings, objection, now, upheld=False)


# --- the view ---------------------------------------------------------------------------------


class StatementView(BaseModel):
    party: str
    author: str
    body: str
    at: Timestamp


class DisputeView(BaseModel):
    opened_at: Timestamp
    certified_at: Timestamp | None
    panel: list[str] = Field(description="the neutral members named to the panel")
    statements: list[StatementView]
    recommendation: str | None = Field(description="uphold, dismiss or investigate")
    recommendation_note: str | None
    extended: bool
    ruling: str | None = Field(description="the chair's binding decision: uphold or dismiss")
    ruling_reason: str | None
    appealed_at: Timestamp | None
    appeal_reason: str | None
    certify_by: Timestamp
    statements_by: Timestamp | None
    convene_by: Timestamp | None
    recommend_by: Timestamp | None
    decide_by: Timestamp | None
    appeal_by: Timestamp | None


def dispute_view(session: Session, settings: Settings, dispute: Dispute) -> DisputeView:
    due = _deadlines(settings, dispute)
    panel = [u.email for u in (get_user(session, uid) for uid in dispute.panel) if u is not None]
    return DisputeView(
        opened_at=dispute.opened_at,
        certified_at=dispute.certified_at,
        panel=panel,
        statements=[
            StatementView(party=s.party, author=s.author, body=s.body, at=s.at)
            for s in dispute.statements
        ],
        recommendation=dispute.recommendation,
        recommendation_note=dispute.recommendation_note,
        extended=dispute.extended_at is not None,
        ruling=dispute.ruling,
        ruling_reason=dispute.ruling_reason,
        appealed_at=dispute.appealed_at,
        appeal_reason=dispute.appeal_reason,
        certify_by=due.certify_by,
        statements_by=due.statements_by,
        convene_by=due.convene_by,
        recommend_by=due.recommend_by,
        decide_by=due.decide_by,
        appeal_by=due.appeal_by,
    )
