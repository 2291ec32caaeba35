"""The chair releases a cohort (rules §4.1): the release is written to the record, and the
clocks that were waiting on it run (finalizations due, provisional publications starting
their review). Told first as a plan, then done."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.audit import SYSTEM
from app.core.cohorts import Cohort
from app.core.views import Timestamp
from app.db.models import Publication, utcnow
from app.publishing.domain.cohorts import current_cohort
from app.publishing.services.ledger import seal_release
from app.publishing.services.publishing import cohort_to_release, release_cohort, released
from app.review.services.review import ClockReport, record_changes
from app.settings import Settings


def publish_cohort(
    *,
    session: Session,
    settings: Settings,
    cohort_id: str,
    at: dt.datetime | None = None,
    actor: str = SYSTEM,
) -> list[Publication]:
    """The chair releases the cohort due now (not before its time, never a past one): every
    result due in it joins its record. Idempotent: a cohort is released once. A
    provisional publication is its review eligibility date (rules §4.1, §11.2 C)."""
    at = at or utcnow()
    cohort, first_time = release_cohort(session, settings, cohort_id, at, actor)
    if not first_time:
        return []
    written = record_changes(session, settings, at, ClockReport(at), cohort=cohort, actor=actor)
    release = released(session, cohort)
    assert release is not None  # written by release_cohort above
    seal_release(session, settings, release)
    return written


class PlannedEntry(BaseModel):
    """A result a cohort's release publishes."""

    submission: str
    bundle: str = Field(description="the bundle's own id, or the start of the portal's")
    organization: str
    status: str
    result_ids: list[str]


class CohortPlan(BaseModel):
    """What releasing a cohort does (or did): the results it publishes."""

    cohort: str
    publication_at: Timestamp = Field(description="its time: Wednesday 08:00 Pacific")
    publishable_now: bool = Field(
        description="its time has come and it is not released: confirming publishes it; "
        "false before its time, when the entries are what it would publish then, as things "
        "stand now"
    )
    entries: list[PlannedEntry]
    released_at: Timestamp | None = None  # set when the cohort was released before
    released_by: str | None = None


def planned_entry(publication: Publication) -> PlannedEntry:
    submission = publication.submission
    return PlannedEntry(
        submission=submission.public_id,
        bundle=submission.bundle_submission_id or submission.public_id[:8],
        organization=submission.organization.name,
        status=publication.status,
        result_ids=sorted(c.result_id for c in publication.curves if c.result_id),
    )


def upcoming_cohorts(session: Session, settings: Settings, now: dt.datetime) -> list[Cohort]:
    """The cohorts the chair publishes next: the one due now while it is not released,
    and the one after it."""
    due = current_cohort(now, ZoneInfo(settings.cohort_timezone))
    return [due, due.next()] if released(session, due) is None else [due.next()]


def release_plan(
    *,
    session: Session,
    settings: Settings,
    cohort_id: str,
    at: dt.datetime,
    actor: str,
    confirmed: bool,
) -> CohortPlan:
    """Releasing *cohort_id* now, told as a plan: what it publishes, or when and by whom
    it had been released before. Unconfirmed, the release runs inside a savepoint that is
    rolled back, so the chair sees exactly what the confirmed release will do; before the
    cohort's time, as it would run at its time with things as they stand (a dry run is
    allowed at any time, a release only at its time). Refused as the release would be."""
    cohort = cohort_to_release(cohort_id.strip())
    when = cohort.publication_at(ZoneInfo(settings.cohort_timezone))
    before = released(session, cohort)
    if before is not None:
        return CohortPlan(
            cohort=str(cohort),
            publication_at=when,
            publishable_now=False,
            entries=[],
            released_at=before.published_at,
            released_by=before.published_by,
        )
    early = at < when
    savepoint = None if confirmed else session.begin_nested()
    try:
        created = publish_cohort(
            session=session, settings=settings, cohort_id=str(cohort),
            at=when if early and not confirmed else at, actor=actor,
        )  # fmt: skip
        return CohortPlan(
            cohort=str(cohort),
            publication_at=when,
            publishable_now=not early,
            entries=[planned_entry(p) for p in created],
        )
    finally:
        if savepoint is not None:
            savepoint.rollback()
