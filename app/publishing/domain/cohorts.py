"""When a cohort is published, and which one is due (rules §4.1, §4.2): Wednesday 08:00
in the cohorts' time zone, the current due cohort only, embargoed results released at
their day's publication hour."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from app.core.cohorts import Cohort
from app.core.refusals import Refusal


def current_cohort(now: dt.datetime, tz: ZoneInfo) -> Cohort:
    """The latest cohort whose publication time (Wednesday 08:00 in *tz*) has come."""
    local = now.astimezone(tz)
    cohort = Cohort.on_or_before(local.date())
    if cohort.publication_at(tz) > now:
        cohort = cohort.previous()
    return cohort


def pending_cohort(now: dt.datetime, tz: ZoneInfo) -> Cohort:
    """The next cohort to be published: a change made now joins its record."""
    return current_cohort(now, tz).next()


def may_publish(cohort: Cohort, now: dt.datetime, tz: ZoneInfo) -> Refusal | None:
    """A cohort is published at its time and not before; once the next one is due, it is
    the past (rules §4.1): only the current due cohort may be published."""
    when = cohort.publication_at(tz)
    if now < when:
        return Refusal(
            "too-early",
            f"cohort {cohort} is published at {when.isoformat(timespec='minutes')} "
            f"({when.tzname()}), not before",
        )
    due = current_cohort(now, tz)
    if cohort != due:
        return Refusal(
            "not-current",
            f"cohort {cohort} is past: the cohort due now is {due}; what became publishable "
            "since joins it",
        )
    return None


def release_at(day: dt.date, tz: ZoneInfo) -> dt.datetime:
    """Results held to a date (an embargo) are released at that day's publication hour."""
    return Cohort.publication_time_on(day, tz)
