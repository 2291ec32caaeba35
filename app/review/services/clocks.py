"""The review clock and the embargo release date, from the settings (rules §4.2, §11.3)."""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

import holidays as holiday_calendars

from app.core.cohorts import BusinessCalendar, Cohort
from app.core.lifecycle import PublicationMode
from app.db.models import Organization, Submission
from app.review.domain.review import ReviewClock, ReviewRules
from app.settings import Settings, business_calendar


@lru_cache(maxsize=64)
def _public_holidays(
    country: str, subdivision: str | None, years: tuple[int, ...]
) -> frozenset[dt.date]:
    try:
        found = holiday_calendars.country_holidays(country, subdiv=subdivision, years=years)
    except NotImplementedError:  # a country (or subdivision) the library does not know
        return frozenset()
    return frozenset(found.keys())


def jurisdiction_of(
    settings: Settings, organization: Organization | None
) -> tuple[str, str | None]:
    """An organisation's primary jurisdiction, or the configured default (rules §11.3)."""
    if organization is not None and organization.country:
        return organization.country.upper(), organization.subdivision or None
    return settings.default_jurisdiction.upper(), None


def jurisdiction_calendar(
    settings: Settings, organization: Organization | None
) -> BusinessCalendar:
    """Business days for the submitter's clocks: weekends, its jurisdiction's public
    holidays (the ``holidays`` library) and the configured extra dates do not count."""
    country, subdivision = jurisdiction_of(settings, organization)
    years = tuple(range(settings.holiday_years[0], settings.holiday_years[1] + 1))
    local = _public_holidays(country, subdivision, years)
    return BusinessCalendar.of(
        settings.cohort_timezone,
        local | set(settings.holidays),
        settings.cohort_cutoff_business_days,
    )


def submitter_clock(settings: Settings, submission: Submission) -> ReviewClock:
    """The review clock with the submitter's business days (objection deadlines, penalties)."""
    return review_clock(settings, jurisdiction_calendar(settings, submission.organization))


def review_clock(settings: Settings, calendar: BusinessCalendar | None = None) -> ReviewClock:
    return ReviewClock(
        calendar or business_calendar(settings),
        ReviewRules(
            peer_review_days=settings.peer_review_days,
            resolution_days=settings.resolution_days,
            submitter_business_days=settings.submitter_response_business_days,
            objector_business_days=settings.objector_response_business_days,
            embargo_max_days=settings.embargo_max_days,
        ),
    )


def embargo_release(settings: Settings, submission: Submission) -> dt.date | None:
    """When a finalized confidential result is held for its embargo (rules §4.2 B), the
    date it is released; None when it follows the cohort schedule."""
    if (
        submission.publication_mode != PublicationMode.CONFIDENTIAL
        or submission.embargo_date is None
        or submission.finalized_at is None
    ):
        return None
    clock = review_clock(settings)
    release = clock.embargo_release(submission.embargo_date, submission.finalized_at)
    if release <= clock.local_date(submission.finalized_at):
        return None  # the embargo passed while the review was running: next cohort
    due = Cohort.parse(submission.due_cohort or "")
    if due is not None and submission.penalty_cohorts and due.date > release:
        release = due.date  # the penalties' delay holds too
    return release
