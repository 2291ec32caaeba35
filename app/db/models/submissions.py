"""Tables of the submissions feature: the stored archive, the submission, its systems,
curves, points and run artifacts."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.accuracy import AccuracyGate
from app.core.findings import Verdict
from app.core.lifecycle import (
    PointState,
    PublicationMode,
    ReviewPhase,
    SubmissionState,
)
from app.core.regions import Offline
from app.db.models.base import Base, UTCDateTime, enum_of, utcnow

if TYPE_CHECKING:
    from app.db.models.accounts import Organization, User
    from app.db.models.checks import CheckRun
    from app.db.models.jobs import Job
    from app.db.models.publishing import Publication
    from app.db.models.review import Reclassification


class StoredFile(Base):
    """A content-addressed file in the blob store (architecture, decision 5)."""

    __tablename__ = "stored_files"

    id: Mapped[int] = mapped_column(primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    size: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(32))  # "archive"
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Submission(Base):
    __tablename__ = "submissions"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    archive_id: Mapped[int] = mapped_column(ForeignKey("stored_files.id"))
    archive_format: Mapped[str] = mapped_column(String(16))
    original_filename: Mapped[str] = mapped_column(String(255))
    bundle_submission_id: Mapped[str | None] = mapped_column(Text)
    # The submission's folder inside its extracted archive ("" at the top): each host
    # extracts the archive from the store (app.submissions.services.extracted).
    bundle_root: Mapped[str] = mapped_column(Text)
    content_digest: Mapped[str] = mapped_column(String(64), index=True)
    # What the bundle discloses (app.submissions.domain.disclosures), read by the child
    # that read the archive: the pages show it without parsing a bundle file. None for
    # submissions taken before it was kept.
    disclosed: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    state: Mapped[SubmissionState] = mapped_column(
        enum_of(SubmissionState, 32), default=SubmissionState.RECEIVED
    )
    for_review: Mapped[bool] = mapped_column(Boolean, default=True)
    # A test submission (the official CLI's --test): checked, never reviewed, never
    # published nor counted in a cohort.
    is_test: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    # Rules §11.2, chosen at upload and irrevocable: "confidential" or "provisional".
    publication_mode: Mapped[PublicationMode] = mapped_column(
        enum_of(PublicationMode, 16),
        default=PublicationMode.CONFIDENTIAL,
        server_default="confidential",
    )
    finalized_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    # Who uploaded it (None for the demo and for uploads from before accounts).
    submitted_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    # Rules §4.2: declared at upload, may be changed later (the committee is told).
    embargo_date: Mapped[dt.date | None] = mapped_column(Date)
    # Review (rules §11.3): when the clocks started, the phase they are in, the assigned
    # reviewer, the cohorts of delay the penalties added, and the cohort it is due in.
    review_eligible_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    review_phase: Mapped[ReviewPhase | None] = mapped_column(enum_of(ReviewPhase, 32))
    reviewer_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    review_completed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    penalty_cohorts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    due_cohort: Mapped[str | None] = mapped_column(String(16))
    verdict: Mapped[Verdict | None] = mapped_column(enum_of(Verdict, 16))
    checker_version: Mapped[str | None] = mapped_column(String(32))
    target_cohort: Mapped[str | None] = mapped_column(Text)
    eligible_cohort: Mapped[str | None] = mapped_column(String(16))
    error_message: Mapped[str | None] = mapped_column(Text)
    uploaded_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    checks_finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    # Where the client ran (rules §2.1): CoP or CoN, as registered or declared at upload.
    scenario: Mapped[str | None] = mapped_column(String(8))
    # A Preview result removed at the cohort after its expiry (rules §11.10), and the
    # notices its submitter was sent before (days before expiry → when).
    preview_expired_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    preview_notices: Mapped[dict[str, str] | None] = mapped_column(JSON)

    organization: Mapped[Organization] = relationship()
    archive: Mapped[StoredFile] = relationship()
    submitted_by: Mapped[User | None] = relationship(foreign_keys=[submitted_by_id])
    reviewer: Mapped[User | None] = relationship(foreign_keys=[reviewer_id])
    systems: Mapped[list[System]] = relationship(
        back_populates="submission", cascade="all, delete-orphan", order_by="System.dir_name"
    )
    curves: Mapped[list[Curve]] = relationship(
        back_populates="submission", cascade="all, delete-orphan", order_by="Curve.id"
    )
    jobs: Mapped[list[Job]] = relationship(back_populates="submission", order_by="Job.id")
    # The chair's reclassifications, in the order decided (the standing reads the latest).
    reclassifications: Mapped[list[Reclassification]] = relationship(
        order_by="Reclassification.id", cascade="all, delete-orphan", passive_deletes=True
    )
    check_runs: Mapped[list[CheckRun]] = relationship(
        back_populates="submission", order_by="CheckRun.id"
    )
    # Its versions in the public record: a finalized result is "verified" only once
    # published as such (architecture, decision 7). Loaded with every list of submissions.
    record_versions: Mapped[list[Publication]] = relationship(
        primaryjoin="and_(Publication.submission_id == Submission.id, "
        "Publication.removed_at.is_(None))",
        viewonly=True,
        lazy="selectin",
    )

    __table_args__ = (Index("ix_submissions_archive_org", "archive_id", "organization_id"),)


class System(Base):
    __tablename__ = "systems"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    dir_name: Mapped[str] = mapped_column(Text)
    system_name: Mapped[str | None] = mapped_column(Text)
    shortened_name: Mapped[str | None] = mapped_column(Text)
    division: Mapped[str | None] = mapped_column(Text)
    availability: Mapped[str | None] = mapped_column(Text)
    accelerator_model: Mapped[str | None] = mapped_column(Text)
    accelerator_count: Mapped[int | None] = mapped_column(BigInteger)
    node_count: Mapped[int | None] = mapped_column(BigInteger)
    serving_framework: Mapped[str | None] = mapped_column(Text)
    provisioned_power_kw: Mapped[float | None] = mapped_column(Float)
    # A Preview system's declared date (rules §11.10), and the power figures the checker
    # filled from the rules' defaults ("MLC Estimated Power"; empty: all sourced).
    target_availability_date: Mapped[dt.date | None] = mapped_column(Date)
    power_estimates: Mapped[list[str] | None] = mapped_column(JSON)

    submission: Mapped[Submission] = relationship(back_populates="systems")

    __table_args__ = (UniqueConstraint("submission_id", "dir_name"),)


class Curve(Base):
    """One Pareto curve: a system × benchmark model (§8.5)."""

    __tablename__ = "curves"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"))
    benchmark_model: Mapped[str] = mapped_column(Text)
    dataset: Mapped[str | None] = mapped_column(Text)
    is_agentic: Mapped[bool] = mapped_column(Boolean, default=False)
    c_max: Mapped[int | None] = mapped_column(BigInteger)
    c_min: Mapped[int | None] = mapped_column(BigInteger)
    c_min_overridden: Mapped[bool] = mapped_column(Boolean, default=False)
    regions: Mapped[dict[str, list[int]] | None] = mapped_column(JSON)

    submission: Mapped[Submission] = relationship(back_populates="curves")
    system: Mapped[System] = relationship()
    points: Mapped[list[Point]] = relationship(
        back_populates="curve", cascade="all, delete-orphan", order_by="Point.concurrency"
    )


class Point(Base):
    """One measurement point, with the values the official checker derives for it."""

    __tablename__ = "points"

    id: Mapped[int] = mapped_column(primary_key=True)
    curve_id: Mapped[int] = mapped_column(ForeignKey("curves.id", ondelete="CASCADE"))
    dir_name: Mapped[str] = mapped_column(Text)
    concurrency: Mapped[int] = mapped_column(BigInteger)
    region: Mapped[str | None] = mapped_column(Text)
    declared_region: Mapped[str | None] = mapped_column(Text)
    offline_kind: Mapped[Offline] = mapped_column(enum_of(Offline, 16), default=Offline.NONE)
    load_pattern: Mapped[str] = mapped_column(Text)
    system_tps: Mapped[float] = mapped_column(Float)
    tps_per_user: Mapped[float | None] = mapped_column(Float)
    tpot_p90_ms: Mapped[float | None] = mapped_column(Float)
    ttft_p90_ms: Mapped[float | None] = mapped_column(Float)
    e2e_avg_interactivity: Mapped[float | None] = mapped_column(Float)
    system_tps_per_kw: Mapped[float | None] = mapped_column(Float)
    point_power_kw: Mapped[float | None] = mapped_column(Float)
    # Where nodes_used engages fewer nodes than the system provisions (§4.5.3): the
    # engaged share of the nodes and their accelerators; None: the whole system.
    engaged_share: Mapped[float | None] = mapped_column(Float)
    accelerators_engaged: Mapped[int | None] = mapped_column(BigInteger)
    n_samples_completed: Mapped[int] = mapped_column(BigInteger)
    n_samples_issued: Mapped[int] = mapped_column(BigInteger)
    n_samples_failed: Mapped[int] = mapped_column(BigInteger)
    duration_ms: Mapped[float] = mapped_column(Float)
    total_output_tokens: Mapped[int] = mapped_column(BigInteger)
    accuracy_status: Mapped[AccuracyGate] = mapped_column(
        enum_of(AccuracyGate, 16), default=AccuracyGate.NONE
    )
    # The summary's P50/P90/P95/P99 of TTFT, TPOT and latency, in ms (snapshot.Percentiles).
    percentiles: Mapped[dict[str, dict[str, float]] | None] = mapped_column(JSON)
    # How the responses ended (finish_reason_counts), where the summary says (app.core.finish).
    finish_reason_counts: Mapped[dict[str, int] | None] = mapped_column(JSON)
    # Newer summaries' fields (app.core.run_summary) and each accuracy entry with what the
    # gate compared (app.core.accuracy); None where the bundle has none.
    input_sequence_lengths: Mapped[dict[str, float] | None] = mapped_column(JSON)
    early_stopping: Mapped[dict[str, dict[str, float]] | None] = mapped_column(JSON)
    run_config: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    accuracy_detail: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    target_cohort: Mapped[str | None] = mapped_column(Text)
    seed_set: Mapped[str | None] = mapped_column(Text)
    # Rules §11.1: active, or withdrawn in review / disputed / invalidated after finalization.
    state: Mapped[PointState] = mapped_column(
        enum_of(PointState, 16), default=PointState.ACTIVE, server_default="active"
    )
    state_reason: Mapped[str | None] = mapped_column(Text)

    curve: Mapped[Curve] = relationship(back_populates="points")

    __table_args__ = (UniqueConstraint("curve_id", "dir_name"),)


class RunArtifact(Base):
    """A point's run artifact (``events.jsonl``), gzip-compressed in the blob store.

    ``sha256`` is of the uncompressed content, so the same file uploaded again (or packed
    in a bundle) is recognised whatever its compression.
    """

    __tablename__ = "run_artifacts"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    point_label: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(32))  # "events"
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(BigInteger)  # uncompressed bytes
    stored_size: Mapped[int] = mapped_column(BigInteger)  # compressed bytes at rest
    source: Mapped[str] = mapped_column(String(16))  # "bundle" or "upload"
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)

    __table_args__ = (UniqueConstraint("submission_id", "point_label", "kind", "sha256"),)
