"""Tables. Portable across SQLite and PostgreSQL: no dialect-only types."""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy import Enum as SQLEnum
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from app.core.authorization import Role
from app.core.findings import Severity, Source, Verdict
from app.core.lifecycle import (
    JobState,
    ObjectionState,
    PublicationMode,
    ReviewPhase,
    SubmissionState,
)


def enum_of(values: type[enum.StrEnum], length: int) -> SQLEnum:
    """A column of one of the domain's enums: stored as its value in a VARCHAR of the
    length it always had (no native type, no schema change); a value outside the enum is
    refused before it reaches the database, and rows read back as members."""
    return SQLEnum(
        values,
        native_enum=False,
        create_constraint=False,
        length=length,
        validate_strings=True,
        values_callable=lambda members: [m.value for m in members],
    )


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """Aware UTC datetimes on every backend (SQLite drops the zone otherwise)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(dt.UTC)

    def process_result_value(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Rules §4.4: an assigned review not finished by the end of Week 3 takes the
    # organisation off the committee until it has a newly finalized result.
    committee_suspended_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    # Appointed to the committee by the chair, whatever its results (rules §4.4).
    committee_appointed: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    # The submitter's primary jurisdiction: its public holidays do not count as business
    # days on the objection clocks (rules §11.3). ISO 3166-1 alpha-2, optional subdivision.
    country: Mapped[str | None] = mapped_column(String(2))
    subdivision: Mapped[str | None] = mapped_column(String(8))


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    organization_id: Mapped[int | None] = mapped_column(ForeignKey("organizations.id"))
    email: Mapped[str] = mapped_column(String(320), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    role: Mapped[Role] = mapped_column(enum_of(Role, 32), default=Role.SUBMITTER)
    password_hash: Mapped[str | None] = mapped_column(Text)
    is_active: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)

    organization: Mapped[Organization | None] = relationship()


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
    state: Mapped[SubmissionState] = mapped_column(
        enum_of(SubmissionState, 32), default=SubmissionState.RECEIVED
    )
    for_review: Mapped[bool] = mapped_column(Boolean, default=True)
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
    check_runs: Mapped[list[CheckRun]] = relationship(
        back_populates="submission", order_by="CheckRun.id"
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
    offline_kind: Mapped[str] = mapped_column(Text, default="none")
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
    accuracy_status: Mapped[str] = mapped_column(String(16), default="none")
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
    state: Mapped[str] = mapped_column(String(16), default="active", server_default="active")
    state_reason: Mapped[str | None] = mapped_column(Text)

    curve: Mapped[Curve] = relationship(back_populates="points")

    __table_args__ = (UniqueConstraint("curve_id", "dir_name"),)


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


class CohortRelease(Base):
    """A cohort published by the chair, at or after its time (rules §4.1); once a later
    cohort is released, what this one showed never changes."""

    __tablename__ = "cohort_releases"

    id: Mapped[int] = mapped_column(primary_key=True)
    cohort: Mapped[str] = mapped_column(String(16), unique=True)
    published_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    published_by: Mapped[str] = mapped_column(Text)


class Publication(Base):
    """One version of a submission's public record, in the cohort whose record it joins.

    Append-only: a new version is written when the derived record changes (a status
    change, a point withdrawn or invalidated, a withdrawal or invalidation after
    finalization, tagged so). Each cohort's view shows the latest version of each
    submission up to that cohort, so an older cohort still shows what was public then;
    the active page shows the latest version of all.
    """

    __tablename__ = "publications"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    cohort: Mapped[str] = mapped_column(String(16), index=True)
    # verified | provisional | unverified, or the archive tags withdrawn | invalidated
    status: Mapped[str] = mapped_column(String(16))
    published_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Why this version was written (the chair's reason for a withdrawal, say).
    description: Mapped[str | None] = mapped_column(Text)
    # Set when the result leaves no public record after all (rejected, or withdrawn before
    # finalization, rules §11.7): no view shows it; the row stays for the audit.
    removed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    submission: Mapped[Submission] = relationship()
    curves: Mapped[list[PublishedCurve]] = relationship(
        back_populates="publication", cascade="all, delete-orphan", order_by="PublishedCurve.id"
    )

    __table_args__ = (Index("ix_publications_submission_cohort", "submission_id", "cohort"),)

    @classmethod
    def in_record(cls) -> Any:
        """The condition every view of the public record filters on."""
        return cls.removed_at.is_(None)


class PublishedCurve(Base):
    """One curve of a publication, with what buyers filter on kept in columns."""

    __tablename__ = "published_curves"

    id: Mapped[int] = mapped_column(primary_key=True)
    publication_id: Mapped[int] = mapped_column(
        ForeignKey("publications.id", ondelete="CASCADE"), index=True
    )
    benchmark_model: Mapped[str] = mapped_column(Text, index=True)
    dataset: Mapped[str | None] = mapped_column(Text)
    is_agentic: Mapped[bool] = mapped_column(Boolean, default=False)
    system_name: Mapped[str] = mapped_column(Text)
    organization: Mapped[str] = mapped_column(Text)
    division: Mapped[str | None] = mapped_column(Text)
    availability: Mapped[str | None] = mapped_column(Text)
    accelerator_model: Mapped[str | None] = mapped_column(Text)
    accelerator_count: Mapped[int | None] = mapped_column(BigInteger)
    provisioned_power_kw: Mapped[float | None] = mapped_column(Float)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)  # app.publishing.domain.snapshot
    snapshot_version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    # Rules §9.7: <major>.<minor>.<cohort-number>.<model_id>.<dataset_id>.<entry>.
    result_id: Mapped[str | None] = mapped_column(String(200), index=True)

    publication: Mapped[Publication] = relationship(back_populates="curves")


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
    # The point's run over time (harness/timeseries.py), served on its own: tens of KB.
    timeseries: Mapped[dict[str, Any] | None] = mapped_column(JSON, deferred=True)
    # Its steady state from the events (harness/steady_state.py), with the block declared.
    steady_state: Mapped[dict[str, Any] | None] = mapped_column(JSON, deferred=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    submission: Mapped[Submission] = relationship()
    artifact: Mapped[RunArtifact] = relationship()
    job: Mapped[Job | None] = relationship()
    # Where its events were counted in parts by several workers (none: by its own job).
    parts: Mapped[list[RecountPart]] = relationship(order_by="RecountPart.part", viewonly=True)


class RecountPart(Base):
    """One part of a point's re-count split across workers (harness/ranges.py): the lines
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


class ApiToken(Base):
    """A scoped API token: shown once, stored as a hash, revocable."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    name: Mapped[str] = mapped_column(Text)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))  # to recognise a token in lists
    scopes: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    user: Mapped[User] = relationship()


class WebSession(Base):
    """A browser login; the cookie holds a secret whose hash is stored here."""

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())

    user: Mapped[User] = relationship()


class Invitation(Base):
    """A one-time, expiring link that lets a newcomer set a password and join with the
    role and organisation the inviter chose; only the link secret's hash is stored."""

    __tablename__ = "invitations"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320), index=True)
    role: Mapped[Role] = mapped_column(enum_of(Role, 32))
    organization: Mapped[str | None] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # None: the operator's command line.
    invited_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    accepted_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    request_id: Mapped[int | None] = mapped_column(ForeignKey("account_requests.id"))

    invited_by: Mapped[User | None] = relationship()


class AccountRequest(Base):
    """Someone without an account asking for one, from the sign-in page; it reaches the
    chairs' inbox, and an invitation answers it."""

    __tablename__ = "account_requests"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    display_name: Mapped[str] = mapped_column(String(200))
    organization: Mapped[str] = mapped_column(String(200))
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # When a chair answered it: invited (an Invitation names it) or declined.
    handled_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    outcome: Mapped[str | None] = mapped_column(String(16))


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


class ResultEntry(Base):
    """A result id handed out once and never reused (rules §9.7): one curve of a submission."""

    __tablename__ = "result_entries"

    id: Mapped[int] = mapped_column(primary_key=True)
    prefix: Mapped[str] = mapped_column(String(180))  # major.minor.cohort.model.dataset
    # Entry numbers are unique within the first four components (rules §9.7).
    scope: Mapped[str] = mapped_column(String(180))  # major.minor.cohort.model
    entry: Mapped[int] = mapped_column(Integer)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"))
    system_dir: Mapped[str] = mapped_column(Text)
    benchmark_model: Mapped[str] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @property
    def result_id(self) -> str:
        return f"{self.prefix}.{self.entry}"

    __table_args__ = (
        UniqueConstraint("scope", "entry"),
        UniqueConstraint("submission_id", "system_dir", "benchmark_model"),
    )


class Objection(Base):
    """An objection against a submission or one of its points (rules §11.4)."""

    __tablename__ = "objections"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), index=True)
    point_label: Mapped[str | None] = mapped_column(Text)
    type: Mapped[str] = mapped_column(String(32))
    severity: Mapped[str] = mapped_column(String(16))
    rule_cited: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text)
    evidence: Mapped[str] = mapped_column(Text)
    filed_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    by_organizations: Mapped[list[int]] = mapped_column(JSON)  # the "by <org>" tags
    state: Mapped[ObjectionState] = mapped_column(
        enum_of(ObjectionState, 16), default=ObjectionState.OPEN
    )
    filed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    # The submitter's first answer stops the penalty clock (rules §11.3).
    submitter_answered_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    # Set when the submitter answers; the objector's silence past it retracts (§11.3).
    objector_due_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    penalty_level: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    closed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    submission: Mapped[Submission] = relationship()
    filed_by: Mapped[User] = relationship()
    messages: Mapped[list[ObjectionMessage]] = relationship(
        back_populates="objection", cascade="all, delete-orphan", order_by="ObjectionMessage.id"
    )


class ObjectionMessage(Base):
    """One entry of an objection's thread: the filing, answers, comments, decisions."""

    __tablename__ = "objection_messages"

    id: Mapped[int] = mapped_column(primary_key=True)
    objection_id: Mapped[int] = mapped_column(
        ForeignKey("objections.id", ondelete="CASCADE"), index=True
    )
    author: Mapped[str] = mapped_column(Text)  # an e-mail, or "system"
    organization: Mapped[str | None] = mapped_column(Text)
    action: Mapped[str] = mapped_column(String(32))
    body: Mapped[str] = mapped_column(Text)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())

    objection: Mapped[Objection] = relationship(back_populates="messages")


class Notification(Base):
    """An entry in a user's in-app inbox; e-mailed too when SMTP is configured."""

    __tablename__ = "notifications"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    subject: Mapped[str] = mapped_column(Text)
    body: Mapped[str] = mapped_column(Text)
    link: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    read_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    emailed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    user: Mapped[User] = relationship()


class SuperPassDefinition(Base):
    """A benchmark definition's own super-pass size for a dataset (rules §2.1: one full pass
    over the dataset unless the benchmark definition sets another); set by the operator."""

    __tablename__ = "super_pass_definitions"

    dataset: Mapped[str] = mapped_column(Text, primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    source: Mapped[str] = mapped_column(Text)
    set_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
