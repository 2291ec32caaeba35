"""State changes go through here, so each one leaves its line in the audit log."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.lifecycle import SubmissionState, transition
from app.core.views import Timestamp
from app.db.models import AuditEvent, Submission, utcnow

SYSTEM = "system"
# The portal's own steps (checks, clocks, releases) as a reader of a timeline names them.
ACTOR_LABELS = {SYSTEM: "the portal"}


def change_state(
    session: Session,
    submission: Submission,
    target: SubmissionState,
    *,
    actor: str = SYSTEM,
    action: str,
    reason: str | None = None,
    at: dt.datetime | None = None,
) -> None:
    """Move *submission* to *target* (if the lifecycle allows it) and record who did it."""
    current = SubmissionState(submission.state)
    submission.state = transition(current, target)
    record(
        session,
        submission,
        action=action,
        actor=actor,
        from_state=current.value,
        to_state=target.value,
        reason=reason,
        at=at,
    )


def record(
    session: Session,
    submission: Submission,
    *,
    action: str,
    actor: str = SYSTEM,
    from_state: str | None = None,
    to_state: str | None = None,
    reason: str | None = None,
    at: dt.datetime | None = None,
) -> None:
    session.add(
        AuditEvent(
            submission_id=submission.id,
            at=at or utcnow(),
            actor=actor,
            action=action,
            from_state=from_state,
            to_state=to_state,
            reason=reason,
        )
    )


def timeline(session: Session, submission: Submission) -> list[AuditEvent]:
    return list(
        session.scalars(
            select(AuditEvent)
            .where(AuditEvent.submission_id == submission.id)
            .order_by(AuditEvent.at, AuditEvent.id)
        )
    )


class TimelineEntry(BaseModel):
    """A state change of a submission: who, when, why."""

    model_config = ConfigDict(populate_by_name=True)

    at: Timestamp
    actor: str = Field(description="an e-mail address, or 'system' for the portal itself")
    actor_label: str = Field(description="who, in words: the portal's own steps say so")
    action: str
    from_state: str | None = Field(serialization_alias="from")
    to_state: str | None = Field(serialization_alias="to")
    reason: str | None


def timeline_view(session: Session, submission: Submission) -> list[TimelineEntry]:
    return [
        TimelineEntry(
            at=e.at,
            actor=e.actor,
            actor_label=ACTOR_LABELS.get(e.actor, e.actor),
            action=e.action,
            from_state=e.from_state,
            to_state=e.to_state,
            reason=e.reason,
        )
        for e in timeline(session, submission)
    ]
