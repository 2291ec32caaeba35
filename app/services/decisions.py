"""The chair's decisions on a submission: finalize, reject, withdraw, invalidate.

Each one goes through the lifecycle and the audit log. A withdrawn or invalidated result
that was public after finalization keeps its archive entry with its tag; withdrawn before
finalization, it leaves no public record (rules §11.7, §11.8).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Point, Submission, utcnow
from app.domain.lifecycle import DECISIONS, IllegalTransition, SubmissionState
from app.domain.review import ReviewPhase
from app.settings import Settings

from .audit import change_state, record
from .notifications import committee, members_of, notify
from .publishing import PublishingError, take_off_public_view
from .review import finalize

NEEDS_REASON = frozenset({"reject", "withdraw", "invalidate"})
POINT_STATES = ("active", "withdrawn", "disputed", "invalidated")


def decide(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    action: str,
    actor: str,
    reason: str | None = None,
    at: dt.datetime | None = None,
) -> None:
    at = at or utcnow()
    if action not in DECISIONS:
        raise PublishingError(
            "bad-decision", f"the decision must be one of {', '.join(DECISIONS)}, not {action!r}"
        )
    if action in NEEDS_REASON and not (reason and reason.strip()):
        raise PublishingError("reason-required", f"say why the submission is {action}ed")
    if action == "finalize":
        finalize(
            session=session,
            settings=settings,
            submission=submission,
            at=at,
            actor=actor,
            reason=reason,
        )
        return
    try:
        change_state(
            session,
            submission,
            DECISIONS[action],
            actor=actor,
            action=action,
            reason=reason,
            at=at,
        )
    except IllegalTransition as exc:
        raise PublishingError("not-allowed", str(exc), 409) from exc
    submission.review_phase = ReviewPhase.CLOSED.value
    if action in ("withdraw", "invalidate"):
        take_off_public_view(session, submission, at)
    notify(
        session,
        [*members_of(session, submission.organization_id), *committee(session)],
        f"Chair decision ({action}): {submission.organization.name} "
        f"submission {submission.public_id[:8]}",
        reason or action,
        f"/submissions/{submission.public_id}",
    )


def set_point_state(
    *,
    session: Session,
    submission: Submission,
    point_label: str,
    state: str,
    actor: str,
    reason: str,
    at: dt.datetime | None = None,
) -> Point:
    """Withdraw a point during review, hold it in dispute, or invalidate it after
    finalization (rules §11.1, §11.7); it leaves the step line and later publications."""
    if state not in POINT_STATES:
        raise PublishingError("bad-state", f"a point's state is one of {', '.join(POINT_STATES)}")
    if not reason.strip():
        raise PublishingError("reason-required", "say why the point changes state")
    finalized = submission.state == SubmissionState.FINALIZED.value
    if state == "invalidated" and not finalized:
        raise PublishingError(
            "not-allowed", "points are invalidated after finalization; withdraw it in review", 409
        )
    if (
        state in ("withdrawn", "disputed")
        and submission.state != SubmissionState.PASSED_CHECKS.value
    ):
        raise PublishingError("not-allowed", f"points are {state} during review only", 409)
    point = find_point(session, submission, point_label)
    if point is None:
        raise PublishingError("unknown-point", f"no point {point_label!r} in this submission", 404)
    before = point.state
    point.state = state
    point.state_reason = reason
    record(
        session,
        submission,
        action="point state",
        actor=actor,
        reason=f"{point_label}: {before} → {state}: {reason}",
        at=at,
    )
    session.flush()
    return point


def find_point(session: Session, submission: Submission, label: str) -> Point | None:
    """*label* is ``<system>/<model>/<point dir>``, as findings name points."""
    for curve in submission.curves:
        prefix = f"{curve.system.dir_name}/{curve.benchmark_model}/"
        if label.startswith(prefix):
            wanted = label[len(prefix) :]
            return next((p for p in curve.points if p.dir_name == wanted), None)
    return None


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
