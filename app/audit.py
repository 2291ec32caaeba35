"""State changes go through here, so each one leaves its line in the audit log."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.core.lifecycle import SubmissionState, transition
from app.core.views import Timestamp
from app.db.models import AuditEvent, ReviewPolicyRecord, Submission, utcnow
from app.settings import Settings, review_policy

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
    policy: str | None = None,
) -> None:
    """Move *submission* to *target* (if the lifecycle allows it) and record who did it
    (and, for a decision, the digest of the review policy in force: ``policy_in_force``)."""
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
        policy=policy,
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
    policy: str | None = None,
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
            policy_digest=policy,
        )
    )


def policy_in_force(session: Session, settings: Settings) -> str:
    """The digest of the review policy in force (rules §15), its values kept the first time
    it is named, so a decision or a version of the record says which values applied."""
    policy = review_policy(settings)
    digest = policy.digest
    if session.get(ReviewPolicyRecord, digest) is None:
        try:
            with session.begin_nested():  # another process may name it at the same moment
                session.add(ReviewPolicyRecord(digest=digest, values=asdict(policy)))
        except IntegrityError:
            pass
    return digest


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


def policy_named(session: Session, digest: str) -> ReviewPolicyRecord | None:
    """The review policy a decision or a version of the record names by *digest*."""
    return session.get(ReviewPolicyRecord, digest[:64])
