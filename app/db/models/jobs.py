"""The background jobs' table."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sqlalchemy import (
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.lifecycle import (
    JobState,
)
from app.db.models.base import Base, UTCDateTime, enum_of, utcnow

if TYPE_CHECKING:
    from app.db.models.submissions import Submission


class Job(Base):
    """Background work; its progress lives here, not in a result backend."""

    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    submission_id: Mapped[int | None] = mapped_column(ForeignKey("submissions.id"))
    # The job that started this one and waits for it (a part of a split re-count).
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"), index=True)
    state: Mapped[JobState] = mapped_column(enum_of(JobState, 16), default=JobState.QUEUED)
    stage: Mapped[str | None] = mapped_column(String(120))
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # Runs put off because the artifact store could not be reached (app.jobs.runner).
    store_waits: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    enqueued_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    started_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    submission: Mapped[Submission | None] = relationship(back_populates="jobs")

    __table_args__ = (Index("ix_jobs_state_kind", "state", "kind"),)
