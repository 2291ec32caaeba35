"""The submitter's business days: its jurisdiction's calendar and the clock it keeps
(rules §11.3)."""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

import holidays as holiday_calendars

from app.core.clocks import ReviewClock
from app.core.cohorts import BusinessCalendar
from app.db.models import Organization, Submission
from app.settings import Settings, review_clock


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
