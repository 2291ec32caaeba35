"""Tables of the runs feature: reproductions, re-counts (and their parts), request logs,
super-pass definitions."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.findings import Severity
from app.db.models.base import Base, UTCDateTime, enum_of, utcnow

if TYPE_CHECKING:
    from app.db.models.jobs import Job
    from app.db.models.submissions import RunArtifact, Submission


class Reproduction(Base):
    """A harness run of one submitted point against an endpoint: an unverified result."""

    __tablename__ = "reproductions"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    point_id: Mapped[int | None] = mapped_column(ForeignKey("points.id", ondelete="SET NULL"))
    point_label: Mapped[str] = mapped_column(Text)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"))
    endpoint_url: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(Text)
    # Encrypted with the portal's secret and erased when the run ends; never shown back.
    api_key_encrypted: Mapped[str | None] = mapped_column(Text)
    concurrency: Mapped[int] = mapped_column(BigInteger)
    time_cap_s: Mapped[float] = mapped_column(Float)
    requested_by: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    run_dir: Mapped[str | None] = mapped_column(Text)  # in the worker's cache directory
    # §11.4: a re-run on the exact same system is held to the tighter margin.
    same_system: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    margin: Mapped[float | None] = mapped_column(Float)  # the margin it was judged with
    submitted_system_tps: Mapped[float | None] = mapped_column(Float)
    # tokens/s per user, or e2e_avg_interactivity on an agentic point (and below).
    submitted_tps_per_user: Mapped[float | None] = mapped_column(Float)
    system_tps: Mapped[float | None] = mapped_column(Float)
    tps_per_user: Mapped[float | None] = mapped_column(Float)
    tpot_p90_ms: Mapped[float | None] = mapped_column(Float)
    ttft_p90_ms: Mapped[float | None] = mapped_column(Float)
    n_completed: Mapped[int | None] = mapped_column(BigInteger)
    n_failed: Mapped[int | None] = mapped_column(BigInteger)
    verdict: Mapped[Severity | None] = mapped_column(enum_of(Severity, 16))  # worst finding
    message: Mapped[str | None] = mapped_column(Text)
    # TTFT and TPOT beside the submitted run's (app.runs.domain.reproduction.compare_latency).
    latency: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # The first run of the series this one was asked for with, the first's own id for
    # the first (None: asked for alone).
    series_of: Mapped[int | None] = mapped_column(ForeignKey("reproductions.id"))

    submission: Mapped[Submission] = relationship()
    job: Mapped[Job | None] = relationship()
    series_first: Mapped[Reproduction | None] = relationship(remote_side=[id])


class Retokenization(Base):
    """One re-count of a point's events with the reference tokenizer."""

    __tablename__ = "retokenizations"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    artifact_id: Mapped[int] = mapped_column(ForeignKey("run_artifacts.id"))
    point_label: Mapped[str] = mapped_column(Text)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"))
    tokenizer: Mapped[str | None] = mapped_column(Text)
    reported: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    recount: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # The point's run over time (harness/analysis/timeseries.py), served on its own: tens of KB.
    timeseries: Mapped[dict[str, Any] | None] = mapped_column(JSON, deferred=True)
    # Its steady state from the events (harness/analysis/steady_state.py), with the block declared.
    steady_state: Mapped[dict[str, Any] | None] = mapped_column(JSON, deferred=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    submission: Mapped[Submission] = relationship()
    artifact: Mapped[RunArtifact] = relationship()
    job: Mapped[Job | None] = relationship()
    # Where its events were counted in parts by several workers (none: by its own job).
    parts: Mapped[list[RecountPart]] = relationship(order_by="RecountPart.part", viewonly=True)


class RecountPart(Base):
    """One part of a point's re-count split across workers (harness/metrics/ranges.py): the lines
    it counts, its job, and the counts it saved for the merge."""

    __tablename__ = "recount_parts"

    id: Mapped[int] = mapped_column(primary_key=True)
    retokenization_id: Mapped[int] = mapped_column(
        ForeignKey("retokenizations.id", ondelete="CASCADE"), index=True
    )
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id"))
    part: Mapped[int] = mapped_column(Integer)
    parts: Mapped[int] = mapped_column(Integer)
    block_lines: Mapped[int] = mapped_column(Integer)
    # The saved counts (sha256 of the .npz file) and how many responses they hold.
    counts_sha256: Mapped[str | None] = mapped_column(String(64))
    responses: Mapped[int | None] = mapped_column(BigInteger)

    job: Mapped[Job] = relationship()

    __table_args__ = (UniqueConstraint("retokenization_id", "part"),)


class RequestLogRow(Base):
    """A re-counted point's per-request record (app.runs.domain.goodput.RequestLog):
    enough to answer any SLA's goodput without reading the events again."""

    __tablename__ = "request_logs"

    id: Mapped[int] = mapped_column(primary_key=True)
    retokenization_id: Mapped[int] = mapped_column(
        ForeignKey("retokenizations.id", ondelete="CASCADE"), unique=True
    )
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    point_label: Mapped[str] = mapped_column(Text)
    requests: Mapped[int] = mapped_column(BigInteger)
    # The official reporting window the log covers (rules §2.3): "steady_state" (the
    # window's requests, over its issue-time span) or "total" (every tracked request, over
    # the point's reported duration).
    window: Mapped[str] = mapped_column(Text, default="total", server_default="total")
    duration_ms: Mapped[float | None] = mapped_column(Float)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SuperPassDefinition(Base):
    """A benchmark definition's own super-pass size for a dataset (rules §2.1: one full pass
    over the dataset unless the benchmark definition sets another); set by the operator."""

    __tablename__ = "super_pass_definitions"

    dataset: Mapped[str] = mapped_column(Text, primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    source: Mapped[str] = mapped_column(Text)
    set_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
