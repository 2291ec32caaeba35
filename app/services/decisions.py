"""The chair's decisions on a submission: finalize, reject, withdraw, invalidate.

Each one goes through the lifecycle and the audit log. A withdrawn or invalidated result
that was public keeps its archive entry: older cohorts still show what was published then,
and a tombstone publication (status "withdrawn" or "invalidated") takes it off the current
curves from the latest cohort on (rules §11.7, §11.8).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Publication, Submission, utcnow
from app.domain.lifecycle import DECISIONS, IllegalTransition, SubmissionState

from .audit import change_state
from .publishing import PublishingError, finalize_submission

NEEDS_REASON = frozenset({"reject", "withdraw", "invalidate"})
TOMBSTONES = {"withdraw": "withdrawn", "invalidate": "invalidated"}


def decide(
    *,
    session: Session,
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
    try:
        if action == "finalize":
            finalize_submission(
                session=session, submission=submission, at=at, actor=actor, reason=reason
            )
        else:
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
    if action in TOMBSTONES:
        _tombstone(session, submission, TOMBSTONES[action], at)


def _tombstone(session: Session, submission: Submission, status: str, at: dt.datetime) -> None:
    published = session.scalar(
        select(func.max(Publication.cohort)).where(Publication.submission_id == submission.id)
    )
    if published is None:
        return  # never public: nothing to take off
    latest = session.scalar(select(func.max(Publication.cohort))) or published
    session.add(Publication(submission=submission, cohort=latest, status=status, published_at=at))
    session.flush()


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
