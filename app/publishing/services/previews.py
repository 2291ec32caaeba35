"""A Preview result's clock and its way out (rules §11.10), from the record: when it first
appeared publicly (the clock's start), the one extension granted, the Available result of
the same system that ships it, and whether it was removed at expiry. The review's acts
(an extension asked and decided, the notices, the removal) and the public tracker read
these facts; the dates are worked out by ``app.publishing.domain.standing``."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.cohorts import Cohort
from app.core.divisions import Availability
from app.core.lifecycle import SubmissionState
from app.core.names import organisation_key
from app.db.models import PreviewExtension, Publication, Submission, System
from app.publishing.domain.standing import PreviewClock
from app.publishing.services.publishing import record_cohort
from app.publishing.services.standing import classification_of, extension_of, preview_terms
from app.settings import Settings


def preview_systems(submission: Submission) -> list[System]:
    """The submission's systems that stand as Preview, declared or reclassified so (an
    RDI division is never Preview)."""
    return [
        s
        for s in submission.systems
        if classification_of(submission, s).status == Availability.PREVIEW
    ]


def first_public_cohort(session: Session, submission: Submission) -> Cohort | None:
    """The cohort in which the result first appeared publicly: the Preview clock's start,
    never reset by a later version."""
    first = session.scalar(
        select(func.min(Publication.cohort)).where(
            Publication.submission_id == submission.id, Publication.in_record()
        )
    )
    return Cohort.parse(first) if first else None


def preview_window(
    session: Session, settings: Settings, submission: Submission, at: dt.datetime
) -> PreviewClock:
    """The window a Preview's date is held to: from the cohort in which the result first
    appeared publicly (never reset, rules §11.10), else the cohort it is eligible for,
    else the one a change made at *at* joins."""
    start = (
        first_public_cohort(session, submission)
        or Cohort.parse(submission.eligible_cohort or "")
        or record_cohort(session, settings, at)
    )
    return PreviewClock(start.date, preview_terms(settings))


def successor_of(session: Session, submission: Submission) -> Submission | None:
    """The Available result of the same system that ships a Preview: from the same
    organisation, of a system of the same name, checked and not withdrawn, the latest."""
    names = {organisation_key(s.system_name or s.dir_name) for s in preview_systems(submission)}
    candidates = session.scalars(
        select(Submission)
        .where(
            Submission.organization_id == submission.organization_id,
            Submission.id != submission.id,
            Submission.state.in_(
                [SubmissionState.PASSED_CHECKS.value, SubmissionState.FINALIZED.value]
            ),
            Submission.uploaded_at >= submission.uploaded_at,
        )
        .order_by(Submission.uploaded_at.desc(), Submission.id.desc())
    ).all()
    for candidate in candidates:
        for system in candidate.systems:
            available = classification_of(candidate, system).status
            named = organisation_key(system.system_name or system.dir_name)
            if available == Availability.AVAILABLE and named in names:
                return candidate
    return None


@dataclass(frozen=True)
class PreviewFacts:
    """What the record says of a Preview result now."""

    submission: Submission
    clock: PreviewClock | None  # None until the result has appeared publicly
    first_cohort: Cohort | None
    available_by: dt.date | None  # its committed date: declared, or the extension's
    extension: PreviewExtension | None
    successor: Submission | None

    @property
    def removed(self) -> bool:
        return self.submission.preview_expired_at is not None

    @property
    def shipped(self) -> bool:
        return self.successor is not None

    @property
    def awaiting_decision(self) -> bool:
        """An extension was asked (in time) and the chair has not decided it yet."""
        return self.extension is not None and self.extension.granted is None

    def expired_by(self, today: dt.date) -> bool:
        """Past its expiry with no Available result to ship it and no extension awaiting
        the chair's decision (asked in time, it holds the removal): due for removal."""
        return (
            self.clock is not None
            and not self.shipped
            and not self.removed
            and not self.awaiting_decision
            and today > self.clock.expires
        )


def preview_facts(
    session: Session, settings: Settings, submission: Submission
) -> PreviewFacts | None:
    """The facts of a submission with a Preview system; None for any other."""
    systems = preview_systems(submission)
    if not systems:
        return None
    extension = extension_of(session, submission)
    granted = extension if extension is not None and extension.granted else None
    first = first_public_cohort(session, submission)
    clock = None
    if first is not None:
        clock = PreviewClock(first.date, preview_terms(settings))
        if granted is not None:
            clock = clock.extended(granted.new_date)
    dates = [classification_of(submission, s).target_date for s in systems]
    declared = min((d for d in dates if d), default=None)
    return PreviewFacts(
        submission=submission,
        clock=clock,
        first_cohort=first,
        available_by=granted.new_date if granted else declared,
        extension=extension,
        successor=successor_of(session, submission),
    )


def public_previews(session: Session) -> list[Submission]:
    """Submissions with a Preview system whose result has appeared publicly and that are
    still live (checked or finalized): the ones whose clocks run."""
    rows = session.scalars(
        select(Submission)
        .where(
            Submission.state.in_(
                [SubmissionState.PASSED_CHECKS.value, SubmissionState.FINALIZED.value]
            ),
            Submission.id.in_(select(Publication.submission_id).where(Publication.in_record())),
        )
        .order_by(Submission.id)
    ).all()
    return [s for s in rows if preview_systems(s)]
