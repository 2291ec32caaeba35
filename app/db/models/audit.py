"""The audit trail's table."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    ForeignKey,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, UTCDateTime, utcnow


class AuditEvent(Base):
    """Append-only: every change of a submission's state, who made it, when and why."""

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    actor: Mapped[str] = mapped_column(Text)  # an e-mail, or "system"
    action: Mapped[str] = mapped_column(String(32))
    from_state: Mapped[str | None] = mapped_column(String(32))
    to_state: Mapped[str | None] = mapped_column(String(32))
    reason: Mapped[str | None] = mapped_column(Text)
    # The review policy in force (its digest, ``review_policies``) when a decision was taken.
    policy_digest: Mapped[str | None] = mapped_column(String(64))


class ReviewPolicyRecord(Base):
    """Each review policy that was ever in force (rules §15), by digest: decisions and
    versions of the record name theirs, so which values applied stays on the record."""

    __tablename__ = "review_policies"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    values: Mapped[dict[str, Any]] = mapped_column(JSON)
    first_in_force_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
