"""Tables of the review feature: objections and their messages, the chair's
reclassifications, corrections, and fraud reports with their screenings."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.lifecycle import (
    UNDECIDED_CORRECTIONS,
    CorrectionState,
    FraudOutcome,
    FraudState,
    ObjectionState,
    Screening,
)
from app.db.models.base import Base, UTCDateTime, enum_of

if TYPE_CHECKING:
    from app.db.models.accounts import User
    from app.db.models.jobs import Job
    from app.db.models.submissions import StoredFile, Submission


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


class Reclassification(Base):
    """The chair moves a result to another division or a lower publication status (rules
    §11.4–§11.6, §8.4): a remedy short of removal. The latest decision that names a field
    holds; the submission's declarations are never edited (a re-check rewrites them)."""

    __tablename__ = "reclassifications"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    division: Mapped[str | None] = mapped_column(String(16))
    availability: Mapped[str | None] = mapped_column(String(16))
    available_by: Mapped[dt.date | None] = mapped_column(Date)  # a Preview's committed date
    reason: Mapped[str] = mapped_column(Text)
    decided_by: Mapped[str] = mapped_column(Text)
    decided_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    # The objection it upholds, if it is one's outcome.
    objection_id: Mapped[int | None] = mapped_column(ForeignKey("objections.id"))

    objection: Mapped[Objection | None] = relationship()


class FraudReport(Base):
    """A report of fraud or misrepresentation against a submission (rules §11.5, SR §8.4):
    seen by the chairs, the neutral members and whoever filed it."""

    __tablename__ = "fraud_reports"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    filed_by_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    allegation: Mapped[str] = mapped_column(Text)
    evidence: Mapped[str] = mapped_column(Text)
    filed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    state: Mapped[FraudState] = mapped_column(enum_of(FraudState, 16), default=FraudState.SCREENING)
    outcome: Mapped[FraudOutcome | None] = mapped_column(enum_of(FraudOutcome, 16))
    decided_by: Mapped[str | None] = mapped_column(Text)
    decided_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    reason: Mapped[str | None] = mapped_column(Text)

    submission: Mapped[Submission] = relationship()
    filed_by: Mapped[User] = relationship()
    screenings: Mapped[list[FraudScreening]] = relationship(
        back_populates="report", cascade="all, delete-orphan", order_by="FraudScreening.id"
    )


class FraudScreening(Base):
    """One screener's finding on a fraud report (a neutral member, once each)."""

    __tablename__ = "fraud_screenings"
    __table_args__ = (UniqueConstraint("report_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    report_id: Mapped[int] = mapped_column(
        ForeignKey("fraud_reports.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    finding: Mapped[Screening] = mapped_column(enum_of(Screening, 16))
    note: Mapped[str] = mapped_column(Text)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())

    report: Mapped[FraudReport] = relationship(back_populates="screenings")
    user: Mapped[User] = relationship()


class Dispute(Base):
    """Objections still open after Week 6 (rules §11.6): the chair's certification and
    panel, the panel's recommendation, the chair's binding decision and any appeal."""

    __tablename__ = "disputes"

    id: Mapped[int] = mapped_column(primary_key=True)
    # One per review's Week 6, and one per round of late objections after finalization.
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    opened_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    certified_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    certified_by: Mapped[str | None] = mapped_column(Text)
    panel: Mapped[list[int]] = mapped_column(JSON, default=list)  # neutral members' user ids
    convened_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    recommendation: Mapped[str | None] = mapped_column(String(16))
    recommendation_note: Mapped[str | None] = mapped_column(Text)
    recommended_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    extended_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    ruling: Mapped[str | None] = mapped_column(String(16))
    ruling_reason: Mapped[str | None] = mapped_column(Text)
    decided_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    appealed_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    appealed_by: Mapped[str | None] = mapped_column(Text)
    appeal_reason: Mapped[str | None] = mapped_column(Text)

    submission: Mapped[Submission] = relationship()
    statements: Mapped[list[DisputeStatement]] = relationship(
        back_populates="dispute", cascade="all, delete-orphan", order_by="DisputeStatement.id"
    )


class DisputeStatement(Base):
    """A party's written statement in a dispute (the submitter's, or an objector's)."""

    __tablename__ = "dispute_statements"

    id: Mapped[int] = mapped_column(primary_key=True)
    dispute_id: Mapped[int] = mapped_column(
        ForeignKey("disputes.id", ondelete="CASCADE"), index=True
    )
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    party: Mapped[str] = mapped_column(String(16))  # submitter | objector
    author: Mapped[str] = mapped_column(Text)
    body: Mapped[str] = mapped_column(Text)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())

    dispute: Mapped[Dispute] = relationship(back_populates="statements")


class ReachabilityCheck(Base):
    """A check of a client-over-network result's endpoint (rules §11.10): recorded by the
    chair (a failed one within the window breaks the Available test)."""

    __tablename__ = "reachability_checks"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    system_dir: Mapped[str] = mapped_column(Text)
    reachable: Mapped[bool] = mapped_column(Boolean)
    detail: Mapped[str] = mapped_column(Text)
    checked_on: Mapped[dt.date] = mapped_column(Date)
    recorded_by: Mapped[str] = mapped_column(Text)
    recorded_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())


class AuditRound(Base):
    """A quarter's audit selection (rules §11.12): the committee's nominations and ranked
    ballots, the tally, and the random draw."""

    __tablename__ = "audit_rounds"

    id: Mapped[int] = mapped_column(primary_key=True)
    quarter: Mapped[str] = mapped_column(String(8), unique=True)  # 2027-Q1
    opened_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    opened_by: Mapped[str] = mapped_column(Text)
    tallied_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    tally: Mapped[list[dict[str, int]] | None] = mapped_column(JSON)  # each count's figures
    drawn_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    roll: Mapped[int | None] = mapped_column(Integer)  # the die: 1 to 6
    drawn_cohort: Mapped[str | None] = mapped_column(String(16))

    nominations: Mapped[list[AuditNomination]] = relationship(
        back_populates="round", cascade="all, delete-orphan", order_by="AuditNomination.id"
    )
    ballots: Mapped[list[AuditBallot]] = relationship(
        cascade="all, delete-orphan", order_by="AuditBallot.id"
    )


class AuditNomination(Base):
    """A committee member's nomination of a published result, with its reason."""

    __tablename__ = "audit_nominations"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    round_id: Mapped[int] = mapped_column(ForeignKey("audit_rounds.id", ondelete="CASCADE"))
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    nominated_by: Mapped[str] = mapped_column(Text)
    # The nominating organisation (none for a chair's addition).
    organization_id: Mapped[int | None] = mapped_column(ForeignKey("organizations.id"))
    reason: Mapped[str] = mapped_column(Text)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    kind: Mapped[str] = mapped_column(String(16), default="committee", server_default="committee")
    state: Mapped[str] = mapped_column(String(16), default="on-slate", server_default="on-slate")
    # A reproducibility nomination's case (SR §10.4) and its screenings:
    # [{"by": email, "finding": substantiated|unsubstantiated, "note": …, "at": iso}].
    points: Mapped[list[str] | None] = mapped_column(JSON)
    reproduction: Mapped[str | None] = mapped_column(Text)
    deviation: Mapped[str | None] = mapped_column(Text)
    rule_cited: Mapped[str | None] = mapped_column(Text)
    screenings: Mapped[list[dict[str, str]] | None] = mapped_column(JSON)
    decided_by: Mapped[str | None] = mapped_column(Text)
    decided_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    decision_reason: Mapped[str | None] = mapped_column(Text)

    round: Mapped[AuditRound] = relationship(back_populates="nominations")
    submission: Mapped[Submission] = relationship()


class AuditBallot(Base):
    """One committee organisation's ranking in a round (its latest replaces the one before)."""

    __tablename__ = "audit_ballots"
    __table_args__ = (UniqueConstraint("round_id", "organization_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("audit_rounds.id", ondelete="CASCADE"))
    organization_id: Mapped[int] = mapped_column(ForeignKey("organizations.id"))
    ranking: Mapped[list[str]] = mapped_column(JSON)  # nomination ids, or "none"
    cast_by: Mapped[str] = mapped_column(Text)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime())


class Audit(Base):
    """An audit of a result (rules §11.12): how it was selected, its steps, its outcome."""

    __tablename__ = "audits"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    round_id: Mapped[int] = mapped_column(ForeignKey("audit_rounds.id", ondelete="CASCADE"))
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"))
    way: Mapped[str] = mapped_column(String(16))  # vote | chairs | random
    selected_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    steps: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)  # step → ISO date
    auditor: Mapped[str | None] = mapped_column(Text)
    outcome: Mapped[str | None] = mapped_column(String(16))
    outcome_reason: Mapped[str | None] = mapped_column(Text)
    decided_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    round: Mapped[AuditRound] = relationship()
    submission: Mapped[Submission] = relationship()


UNDECIDED_SQL = "state IN ({})".format(", ".join(f"'{s}'" for s in sorted(UNDECIDED_CORRECTIONS)))


class Correction(Base):
    """A new bundle for a submission whose results are the submitted ones, byte for byte,
    less the points withdrawn: its non-result content corrected (rules §11.7). The
    submission's archive becomes this one once it is checked (in review) or approved by
    the chair (after finalization); until then the archive is kept here only."""

    __tablename__ = "corrections"
    # One undecided correction per submission, even for two filed at the same instant.
    __table_args__ = (
        Index(
            "uq_corrections_undecided",
            "submission_id",
            unique=True,
            sqlite_where=text(UNDECIDED_SQL),
            postgresql_where=text(UNDECIDED_SQL),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(
        String(32), unique=True, default=lambda: uuid.uuid4().hex
    )
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    archive_id: Mapped[int] = mapped_column(ForeignKey("stored_files.id"))
    archive_format: Mapped[str] = mapped_column(String(16))
    bundle_root: Mapped[str] = mapped_column(Text)
    bundle_submission_id: Mapped[str | None] = mapped_column(Text)
    content_digest: Mapped[str] = mapped_column(String(64))
    disclosed: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # The files it adds, changes or removes, by their path under the submission root.
    changed_files: Mapped[list[str]] = mapped_column(JSON)
    reason: Mapped[str] = mapped_column(Text)
    filed_by: Mapped[str] = mapped_column(Text)
    filed_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    # Made after finalization: the chair approves it, and the result's change log shows it.
    after_finalization: Mapped[bool] = mapped_column(Boolean, default=False)
    state: Mapped[CorrectionState] = mapped_column(
        enum_of(CorrectionState, 16), default=CorrectionState.CHECKING
    )
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id"))
    # Why it was refused or declined, or the chair's word on approving it.
    outcome: Mapped[str | None] = mapped_column(Text)
    decided_by: Mapped[str | None] = mapped_column(Text)
    decided_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())
    applied_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime())

    submission: Mapped[Submission] = relationship()
    archive: Mapped[StoredFile] = relationship()
    job: Mapped[Job | None] = relationship()
