"""The chair's decisions on a submission: finalize, reject, withdraw, invalidate, and
reclassify (a remedy short of removal).

Each one goes through the lifecycle and the audit log. A withdrawn or invalidated result
that was public after finalization keeps its archive entry with its tag; withdrawn before
finalization, it leaves no public record (rules §11.7, §11.8). A reclassified one gets a
new version of its record; the one before stays in its history with its tags.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import committee, members_of, notify
from app.audit import change_state, policy_in_force, record
from app.core.authorization import Actor
from app.core.divisions import availability_of, division_of
from app.core.lifecycle import (
    DECISIONS,
    IllegalTransition,
    PointState,
    ReviewPhase,
    SubmissionState,
)
from app.core.refusals import Kind
from app.db.models import Objection, Point, Reclassification, Submission, utcnow
from app.publishing.domain.standing import Remedy, remedy_problem
from app.publishing.services.previews import preview_window
from app.publishing.services.publishing import PublishingError
from app.publishing.services.standing import classification_of
from app.review.domain.policy import may_decide, may_reclassify, may_set_point_state, may_withdraw
from app.review.services.objections import get_objection, uphold
from app.review.services.policy import enforce, facts_of
from app.review.services.review import curves_short, finalize, keep_record
from app.settings import Settings, review_policy
from app.submissions.services.points import find_point

RECLASSIFY = "reclassify"
#: Every decision the chair takes on a submission, as the decisions API names them.
ACTIONS = (*DECISIONS, RECLASSIFY)
# The decisions that say why, as the refusal names them.
NEEDS_REASON = {
    "reject": "rejected", "withdraw": "withdrawn", "invalidate": "invalidated",
    RECLASSIFY: "reclassified",
}  # fmt: skip


def decide(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    action: str,
    actor: str,
    reason: str | None = None,
    at: dt.datetime | None = None,
    override: bool = False,
    remedy: Remedy | None = None,
    objection: str | None = None,
    undisputed: bool = False,
) -> None:
    """The chair's decision (the web layer lets only the chair's scope call this);
    *override*: finalize although the review is not complete, *reason* saying why;
    *undisputed*: finalize the points no open objection names (rules §11.6);
    *remedy*: what a reclassification changes, *objection* the one it upholds."""
    at = at or utcnow()
    if action not in ACTIONS:
        raise PublishingError(
            "bad-decision", f"the decision must be one of {', '.join(ACTIONS)}, not {action!r}"
        )
    if action in NEEDS_REASON and not (reason and reason.strip()):
        raise PublishingError(
            "reason-required", f"say why the submission is {NEEDS_REASON[action]}"
        )
    if action == RECLASSIFY:
        reclassify(session=session, settings=settings, submission=submission, actor=actor,
                   reason=reason or "", remedy=remedy or Remedy(), objection=objection,
                   at=at)  # fmt: skip
        return
    if action == "finalize":
        finalize(
            session=session,
            settings=settings,
            submission=submission,
            at=at,
            actor=actor,
            reason=reason,
            override=(reason or "") if override else None,
            undisputed=undisputed,
        )
        return
    facts = facts_of(session, submission)
    if action == "withdraw":
        enforce(may_withdraw(Actor(chair=True), facts))
    else:
        enforce(may_decide(action, facts))
    _close(session, settings, submission, action, actor, reason or action, at)


def reclassify(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    actor: str,
    reason: str,
    remedy: Remedy,
    objection: str | None = None,
    at: dt.datetime | None = None,
) -> Reclassification:
    """Move every system of the submission to another division or a lower publication
    status (rules §11.4–§11.6, §8.4, §11.12): on the timeline, a new version of the public
    record (the one before stays in the history, with its tags), and, where *objection*
    names one of the submission's open objections, that objection's outcome."""
    at = at or utcnow()
    enforce(may_reclassify(facts_of(session, submission)))
    window = preview_window(session, settings, submission, at)
    for system in submission.systems:
        problem = remedy_problem(classification_of(submission, system), remedy, window.window_end)
        if problem is not None:
            raise PublishingError("bad-reclassification", f"{system.dir_name}: {problem}")
    upheld = _objection_of(session, submission, objection)
    division = division_of(remedy.division)
    status = availability_of(remedy.availability, None)
    change = Reclassification(
        division=division.value if division else None,
        availability=status.value if status else None,
        available_by=remedy.available_by,
        reason=reason.strip(),
        decided_by=actor,
        decided_at=at,
        objection=upheld,
    )
    submission.reclassifications.append(change)
    said = reclassified_as(change)
    if upheld is not None:
        uphold(session, upheld, by=actor, outcome=f"Upheld: {said}. {change.reason}", at=at)
    record(session, submission, action=RECLASSIFY, actor=actor, reason=f"{said}: {change.reason}",
           at=at, policy=policy_in_force(session, settings))  # fmt: skip
    session.flush()
    keep_record(session, settings, submission, at, why=said)
    notify(
        session,
        [*members_of(session, submission.organization_id), *committee(session)],
        f"Reclassified: {submission.organization.name} submission {submission.public_id[:8]}",
        f"{actor}: {said}: {change.reason}",
        f"/submissions/{submission.public_id}",
    )
    return change


def reclassified_as(change: Reclassification) -> str:
    """A reclassification in words: "reclassified to RDI", "to Preview, Available by …"."""
    parts = []
    if change.division:
        parts.append(f"the {change.division} division")
    if change.availability:
        dated = f", Available by {change.available_by}" if change.available_by else ""
        parts.append(f"{change.availability}{dated}")
    return "reclassified to " + " and ".join(parts)


def _objection_of(
    session: Session, submission: Submission, public_id: str | None
) -> Objection | None:
    if not public_id:
        return None
    found = get_objection(session, public_id)
    if found is None or found.submission_id != submission.id:
        raise PublishingError(
            "unknown-objection", f"no objection {public_id!r} against this submission",
            Kind.NOT_FOUND,
        )  # fmt: skip
    return found


def withdraw(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    who: Principal,
    reason: str,
    at: dt.datetime | None = None,
) -> None:
    """The submitting organisation withdraws its submission, at any time (rules §11.7):
    before finalization it leaves no public record; after, an archive entry tagged
    "Withdrawn". The chair may too."""
    at = at or utcnow()
    if not reason.strip():
        raise PublishingError("reason-required", "say why the submission is withdrawn")
    enforce(may_withdraw(actor_of(who, submission), facts_of(session, submission)))
    _close(session, settings, submission, "withdraw", who.email, reason.strip(), at)


def _close(
    session: Session,
    settings: Settings,
    submission: Submission,
    action: str,
    actor: str,
    reason: str,
    at: dt.datetime,
) -> None:
    try:
        change_state(
            session, submission, DECISIONS[action], actor=actor, action=action, reason=reason,
            at=at, policy=policy_in_force(session, settings),
        )  # fmt: skip
    except IllegalTransition as exc:
        raise PublishingError("not-allowed", str(exc), Kind.CONFLICT) from exc
    submission.review_phase = ReviewPhase.CLOSED
    keep_record(session, settings, submission, at, why=reason)
    notify(
        session,
        [*members_of(session, submission.organization_id), *committee(session)],
        f"Decision ({action}): {submission.organization.name} "
        f"submission {submission.public_id[:8]}",
        f"{actor}: {reason}",
        f"/submissions/{submission.public_id}",
    )


def set_point_state(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    point_label: str,
    state: str,
    who: Principal,
    reason: str,
    at: dt.datetime | None = None,
) -> Point:
    """Withdraw a point during review (its submitter or the chair), hold it in dispute, or
    invalidate it after finalization (the chair; rules §11.1, §11.7). It leaves the step
    line and every active curve at once; a published cohort keeps what it showed."""
    at = at or utcnow()
    if not reason.strip():
        raise PublishingError("reason-required", "say why the point changes state")
    point = find_point(submission, point_label)
    if point is None:
        raise PublishingError(
            "unknown-point", f"no point {point_label!r} in this submission", Kind.NOT_FOUND
        )
    asking = actor_of(who, submission)
    enforce(may_set_point_state(asking, facts_of(session, submission), point.state, state))
    before = point.state
    point.state = PointState(state)
    short = curves_short(submission, review_policy(settings).max_points)
    if state == "invalidated" and short:
        point.state = before
        # A finalized curve keeps the minimum (rules §5.2): the result as a whole goes.
        raise PublishingError(
            "curve-incomplete",
            f"invalidating {point_label} leaves {short}: invalidate the whole result instead",
            Kind.CONFLICT,
        )
    point.state_reason = reason.strip()
    record(
        session,
        submission,
        action="point state",
        actor=who.email,
        reason=f"{point_label}: {before} → {state}: {reason.strip()}",
        at=at,
    )
    session.flush()
    keep_record(session, settings, submission, at, why=f"{point_label} {state}")
    return point


def in_review(session: Session) -> list[Submission]:
    """The reviewers' queue: submissions that passed their checks and await a decision."""
    return list(
        session.scalars(
            select(Submission)
            .where(
                Submission.state == SubmissionState.PASSED_CHECKS.value,
                Submission.for_review.is_(True),
            )
            .order_by(Submission.checks_finished_at)
        )
    )
