"""Tables of the published record: cohort releases, publications and their curves, result
ids."""

from __future__ import annotations

import datetime as dt
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
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.lifecycle import RecordStatus
from app.db.models.base import Base, UTCDateTime, enum_of, utcnow

if TYPE_CHECKING:
    from app.db.models.submissions import Submission


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
    status: Mapped[RecordStatus] = mapped_column(enum_of(RecordStatus, 16))
    published_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Why this version was written (the chair's reason for a withdrawal, say).
    description: Mapped[str | None] = mapped_column(Text)
    # Set when the result leaves no public record after all (rejected, or withdrawn before
    # finalization, rules §11.7): no view shows it; the row stays for the audit.
    removed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), index=True)
    # The review policy in force when this version was written (``review_policies``).
    policy_digest: Mapped[str | None] = mapped_column(String(64))

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
    # The result's standing as published (app.publishing.domain.standing): the scenario,
    # a Preview's committed date (its declared target, or the extension's), and whether
    # its power comes partly from the rules' defaults.
    scenario: Mapped[str | None] = mapped_column(String(8))
    available_by: Mapped[dt.date | None] = mapped_column(Date)
    power_estimated: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    # What buyers filter on that the bundle discloses (app.publishing.domain.facts).
    facts: Mapped[dict[str, str] | None] = mapped_column(JSON)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)  # app.publishing.domain.snapshot
    snapshot_version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    # The snapshot's points packed as numbers (app.publishing.domain.point_table): derived
    # from ``data`` alone, for reading a large record quickly.
    point_table: Mapped[bytes | None] = mapped_column(LargeBinary)
    # Rules §9.7: <major>.<minor>.<cohort-number>.<model_id>.<dataset_id>.<entry>.
    result_id: Mapped[str | None] = mapped_column(String(200), index=True)

    publication: Mapped[Publication] = relationship(back_populates="curves")


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


class PreviewExtension(Base):
    """The one extension of a Preview window a result may have (rules §11.10): asked by
    its submitter at least 30 days before expiry, decided by the chair."""

    __tablename__ = "preview_extensions"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), unique=True
    )
    asked_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    asked_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    new_date: Mapped[dt.date] = mapped_column(Date)
    reason: Mapped[str] = mapped_column(Text)
    decided_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    decided_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    granted: Mapped[bool | None] = mapped_column(Boolean)
    note: Mapped[str | None] = mapped_column(Text)

    submission: Mapped[Submission] = relationship()


class RecordEntry(Base):
    """One entry of the record's ledger (app.publishing.domain.ledger): appended, never
    changed; its canonical bytes and their signature are what is served."""

    __tablename__ = "record_entries"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(32))
    # What it is about, for finding it: release/<cohort>, or <kind>/<submission public id>.
    subject: Mapped[str] = mapped_column(String(200), index=True)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())  # when the change was made
    key_id: Mapped[str] = mapped_column(String(32))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    body: Mapped[bytes] = mapped_column(LargeBinary)
    signature: Mapped[bytes] = mapped_column(LargeBinary)


class SigningKey(Base):
    """A public key that has signed the ledger; the private half never enters the
    database (it stays in the portal's key file)."""

    __tablename__ = "signing_keys"

    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    algorithm: Mapped[str] = mapped_column(String(16))
    public_pem: Mapped[str] = mapped_column(Text)
    first_used_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    retired_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
