"""Tables, grouped by the feature that owns them. Portable across SQLite and PostgreSQL:
no dialect-only types. Every table is imported here, so the mapper knows them all and
``app.db.models`` names any of them."""

from __future__ import annotations

from app.db.models.accounts import (
    AccountRequest,
    ApiToken,
    Invitation,
    Notification,
    Organization,
    SavedView,
    User,
    WebSession,
)
from app.db.models.audit import AuditEvent, ReviewPolicyRecord
from app.db.models.base import NAMING, Base, UTCDateTime, enum_of, utcnow
from app.db.models.checks import CheckRun, FindingRow
from app.db.models.jobs import Job
from app.db.models.measurements import MeasuredRun
from app.db.models.publishing import (
    CohortRelease,
    PreviewExtension,
    Publication,
    PublishedCurve,
    RecordEntry,
    ResultEntry,
    SigningKey,
)
from app.db.models.review import (
    Audit,
    AuditBallot,
    AuditNomination,
    AuditRound,
    Correction,
    Dispute,
    DisputeStatement,
    FraudReport,
    FraudScreening,
    Objection,
    ObjectionMessage,
    ReachabilityCheck,
    Reclassification,
)
from app.db.models.runs import (
    RecountPart,
    Reproduction,
    RequestLogRow,
    Retokenization,
    SuperPassDefinition,
)
from app.db.models.submission_api import ApiSubmission, ApiSubmissionRun, TransferGrant
from app.db.models.submissions import Curve, Point, RunArtifact, StoredFile, Submission, System
from app.db.models.webhooks import WebhookCursor, WebhookDelivery, WebhookSubscription

__all__ = [
    "AccountRequest",
    "ApiSubmission",
    "ApiSubmissionRun",
    "ApiToken",
    "AuditEvent",
    "Base",
    "CheckRun",
    "CohortRelease",
    "Curve",
    "FindingRow",
    "Invitation",
    "Job",
    "MeasuredRun",
    "NAMING",
    "Notification",
    "Audit",
    "AuditBallot",
    "AuditNomination",
    "AuditRound",
    "Dispute",
    "DisputeStatement",
    "Correction",
    "FraudReport",
    "FraudScreening",
    "Objection",
    "ObjectionMessage",
    "ReachabilityCheck",
    "Reclassification",
    "ReviewPolicyRecord",
    "Organization",
    "Point",
    "Publication",
    "PreviewExtension",
    "PublishedCurve",
    "RecountPart",
    "Reproduction",
    "SavedView",
    "SigningKey",
    "RequestLogRow",
    "RecordEntry",
    "ResultEntry",
    "Retokenization",
    "RunArtifact",
    "StoredFile",
    "Submission",
    "SuperPassDefinition",
    "System",
    "TransferGrant",
    "UTCDateTime",
    "User",
    "WebhookCursor",
    "WebhookDelivery",
    "WebhookSubscription",
    "WebSession",
    "enum_of",
    "utcnow",
]
