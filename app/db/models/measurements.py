"""Tables of the registry of measured runs (the official Submission API's "runs"): each
run a submitter registers as it is measured, with its archive, until a submission is
built from it or it expires."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.models.base import Base, UTCDateTime, utcnow

if TYPE_CHECKING:
    from app.db.models.accounts import Organization, User
    from app.db.models.submissions import StoredFile


class MeasuredRun(Base):
    """One measured run (a point's run folder), registered with the portal."""

    __tablename__ = "measured_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    model: Mapped[str | None] = mapped_column(Text)
    concurrency: Mapped[int | None] = mapped_column(BigInteger)
    benchmark_version: Mapped[str] = mapped_column(Text)
    cli_version: Mapped[str | None] = mapped_column(String(32))
    started_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    # None: pinned (never expires); a run inside a live submission never expires either.
    expires_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    pinned: Mapped[bool] = mapped_column(Boolean, default=False)
    is_test: Mapped[bool] = mapped_column(Boolean, default=False)
    # What the CLI parsed from the run folder: the archive must agree with it.
    system_info: Mapped[dict[str, Any]] = mapped_column(JSON)
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    result_summary: Mapped[dict[str, Any]] = mapped_column(JSON)
    point_config: Mapped[dict[str, Any]] = mapped_column(JSON)
    system_power: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    archive_id: Mapped[int | None] = mapped_column(ForeignKey("stored_files.id"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)

    organization: Mapped[Organization] = relationship()
    user: Mapped[User] = relationship()
    archive: Mapped[StoredFile | None] = relationship()
