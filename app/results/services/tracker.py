"""The public Preview Availability Tracker (rules §11.10): every Preview result the record
has shown, its "Available by" date, the days its window has left, its extension, and how
it ended: shipped (an Available result of the same system superseded it), removed at
expiry, withdrawn or invalidated. Read from the public record alone, so it changes as each
cohort is released and always says what the record says."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.core.cohorts import Cohort
from app.core.divisions import Availability
from app.publishing.domain.standing import PreviewClock
from app.publishing.services.standing import preview_terms
from app.results.services.public import ARCHIVED, REMOVED, latest_cohort, visible_curves
from app.settings import Settings

OUTCOMES = ("pending", "shipped", "removed", "withdrawn", "invalidated")


class TrackedPreview(BaseModel):
    submission: str
    result_id: str | None
    organization: str
    system: str
    benchmark: str
    first_cohort: str = Field(description="the cohort it first appeared in: the clock's start")
    available_by: dt.date | None = Field(description="its committed date")
    window_end: dt.date = Field(description="180 days from that cohort's date")
    expires: dt.date = Field(description="the window's end, or the extension's date")
    extended: bool = Field(description="the one extension was granted")
    days_left: int | None = Field(description="while pending: days until it expires")
    outcome: str = Field(description=" | ".join(OUTCOMES))
    outcome_in: str | None = Field(
        description="the cohort of the outcome: the Available result that superseded it, or "
        "the removal"
    )


class PreviewTracker(BaseModel):
    as_of: dt.date
    cohort: str | None = Field(description="the latest cohort released")
    previews: list[TrackedPreview] = Field(description="the soonest to expire first")


def preview_tracker(session: Session, settings: Settings, today: dt.date) -> PreviewTracker:
    terms = preview_terms(settings)
    tracked = []
    for curve in visible_curves(session, None):
        first = Cohort.parse(curve.published_in)
        if curve.availability != Availability.PREVIEW or first is None:
            continue
        clock = PreviewClock(first.date, terms)
        if curve.available_by is not None and curve.available_by > clock.window_end:
            clock = clock.extended(curve.available_by)
        outcome, outcome_in = "pending", None
        if curve.status == REMOVED:
            outcome, outcome_in = "removed", curve.version_in
        elif curve.status in ARCHIVED:
            outcome, outcome_in = curve.status, curve.version_in
        elif curve.superseded_by is not None:
            outcome, outcome_in = "shipped", curve.superseded_by
        tracked.append(
            TrackedPreview(
                submission=curve.submission,
                result_id=curve.result_id,
                organization=curve.organization,
                system=curve.system_name,
                benchmark=curve.benchmark_model,
                first_cohort=curve.published_in,
                available_by=curve.available_by,
                window_end=clock.window_end,
                expires=clock.expires,
                extended=clock.expires > clock.window_end,
                days_left=clock.days_left(today) if outcome == "pending" else None,
                outcome=outcome,
                outcome_in=outcome_in,
            )
        )
    tracked.sort(key=lambda t: (t.outcome != "pending", t.expires, t.system.lower()))
    return PreviewTracker(as_of=today, cohort=latest_cohort(session), previews=tracked)
