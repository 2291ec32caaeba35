"""Tables of the checks feature: check runs and their findings."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sqlalchemy import (
    ForeignKey,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.findings import Severity, Source, Verdict
from app.db.models.base import Base, UTCDateTime, enum_of

if TYPE_CHECKING:
    from app.db.models.submissions import Submission


class CheckRun(Base):
    """One evaluation that produced findings: the compliance checks, or a reproduction."""

    __tablename__ = "check_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), default="compliance", server_default="compliance")
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"))
    checker_version: Mapped[str] = mapped_column(String(32))
    verdict: Mapped[Verdict] = mapped_column(enum_of(Verdict, 16))
    error_count: Mapped[int] = mapped_column(Integer)
    warning_count: Mapped[int] = mapped_column(Integer)
    evaluated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())

    submission: Mapped[Submission] = relationship(back_populates="check_runs")
    findings: Mapped[list[FindingRow]] = relationship(
        back_populates="check_run", cascade="all, delete-orphan", order_by="FindingRow.position"
    )


class FindingRow(Base):
    __tablename__ = "findings"

    id: Mapped[int] = mapped_column(primary_key=True)
    check_run_id: Mapped[int] = mapped_column(ForeignKey("check_runs.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    source: Mapped[Source] = mapped_column(enum_of(Source, 16))
    rule: Mapped[str] = mapped_column(String(64), index=True)
    key: Mapped[str] = mapped_column(String(64))
    severity: Mapped[Severity] = mapped_column(enum_of(Severity, 16))
    clause: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text)
    message: Mapped[str] = mapped_column(Text)
    fix: Mapped[str | None] = mapped_column(Text)
    path: Mapped[str | None] = mapped_column(Text)
    point: Mapped[str | None] = mapped_column(Text)

    check_run: Mapped[CheckRun] = relationship(back_populates="findings")
