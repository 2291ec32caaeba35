"""Tables of the official Submission API: a submission as the API knows it (registered
from runs before its bundle arrives), the runs it was built from, and the grants behind
signed URLs."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING

from sqlalchemy import Boolean, Date, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.models.base import Base, UTCDateTime, utcnow

if TYPE_CHECKING:
    from app.db.models.accounts import Organization, User
    from app.db.models.measurements import MeasuredRun
    from app.db.models.submissions import Submission


class ApiSubmission(Base):
    """A submission as the official API knows it: registered from runs, awaiting its
    bundle, then the portal's submission that bundle became (one id for both)."""

    __tablename__ = "api_submissions"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    division: Mapped[str] = mapped_column(String(32))
    scenario: Mapped[str] = mapped_column(String(8))
    availability: Mapped[str] = mapped_column(String(32))
    early_publish: Mapped[bool] = mapped_column(Boolean, default=False)
    embargo_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    target_availability_date: Mapped[dt.date | None] = mapped_column(Date)
    is_test: Mapped[bool] = mapped_column(Boolean, default=False)
    cli_version: Mapped[str | None] = mapped_column(String(32))
    submission_id: Mapped[int | None] = mapped_column(ForeignKey("submissions.id"), unique=True)
    # The bundle the intake refused (the code and words of the refusal), if it did.
    refused_code: Mapped[str | None] = mapped_column(String(64))
    refused_message: Mapped[str | None] = mapped_column(Text)
    withdrawn_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)

    organization: Mapped[Organization] = relationship()
    user: Mapped[User] = relationship()
    submission: Mapped[Submission | None] = relationship()
    runs: Mapped[list[ApiSubmissionRun]] = relationship(
        back_populates="api_submission",
        cascade="all, delete-orphan",
        order_by="ApiSubmissionRun.position",
    )


class ApiSubmissionRun(Base):
    """A run a submission was built from; a removed one stays, marked, so that the CLI's
    undo of a removal puts it back."""

    __tablename__ = "api_submission_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    api_submission_id: Mapped[int] = mapped_column(
        ForeignKey("api_submissions.id", ondelete="CASCADE"), index=True
    )
    run_id: Mapped[int] = mapped_column(ForeignKey("measured_runs.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    removed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    api_submission: Mapped[ApiSubmission] = relationship(back_populates="runs")
    run: Mapped[MeasuredRun] = relationship()


class TransferGrant(Base):
    """A signed URL's grant: one upload (single use) or download of one object, until it
    expires; only its id travels, signed."""

    __tablename__ = "transfer_grants"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    direction: Mapped[str] = mapped_column(String(8))  # "upload" or "download"
    subject: Mapped[str] = mapped_column(String(16))  # "run" or "submission"
    subject_id: Mapped[str] = mapped_column(String(32))  # the run's or submission's id
    sha256: Mapped[str | None] = mapped_column(String(64))  # a download's object
    staging_key: Mapped[str | None] = mapped_column(Text)  # an S3 upload's staging object
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    outcome: Mapped[str | None] = mapped_column(Text)  # what became of an upload
    # The worker job that watches an S3 staging object until the grant expires.
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
