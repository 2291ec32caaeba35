"""Cohort calendar (rules §4.1): ids, publication dates, business days and the cutoff.

``YYYY-MM-C0`` is published on the month's 1st Wednesday and ``C1`` on its 3rd, at
08:00 in the cohort time zone (America/Los_Angeles). A submission joins a cohort when
its automated checks passed at least one business day before that Wednesday: here, on
or before the business day that precedes it (by the cohort time zone's calendar date).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

_COHORT_ID = re.compile(r"(?P<year>\d{4})-(?P<month>0[1-9]|1[0-2])-C(?P<index>[01])")
PUBLICATION_TIME = dt.time(8, 0)
WEDNESDAY = 2


@dataclass(frozen=True, order=True)
class Cohort:
    year: int
    month: int
    index: int  # 0: 1st Wednesday, 1: 3rd Wednesday

    @classmethod
    def parse(cls, text: str) -> Cohort | None:
        match = _COHORT_ID.fullmatch(text.strip()) if isinstance(text, str) else None
        if match is None:
            return None
        return cls(int(match["year"]), int(match["month"]), int(match["index"]))

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}-C{self.index}"

    @classmethod
    def on_or_before(cls, day: dt.date) -> Cohort:
        """The latest cohort whose date is *day* or earlier."""
        cohort = cls(day.year, day.month, 1)
        while cohort.date > day:
            cohort = cohort.previous()
        return cohort

    def previous(self) -> Cohort:
        if self.index == 1:
            return Cohort(self.year, self.month, 0)
        if self.month == 1:
            return Cohort(self.year - 1, 12, 1)
        return Cohort(self.year, self.month - 1, 1)

    def next(self) -> Cohort:
        if self.index == 0:
            return Cohort(self.year, self.month, 1)
        if self.month == 12:
            return Cohort(self.year + 1, 1, 0)
        return Cohort(self.year, self.month + 1, 0)

    @property
    def date(self) -> dt.date:
        first = dt.date(self.year, self.month, 1)
        first_wednesday = first + dt.timedelta(days=(WEDNESDAY - first.weekday()) % 7)
        return first_wednesday + dt.timedelta(days=14 * self.index)

    def publication_at(self, tz: ZoneInfo) -> dt.datetime:
        return self.publication_time_on(self.date, tz)

    @staticmethod
    def publication_time_on(day: dt.date, tz: ZoneInfo) -> dt.datetime:
        """The publication hour (08:00 in *tz*) on *day*."""
        return dt.datetime.combine(day, PUBLICATION_TIME, tzinfo=tz)


@dataclass(frozen=True)
class BusinessCalendar:
    tz: ZoneInfo
    holidays: frozenset[dt.date] = frozenset()
    cutoff_business_days: int = 1

    @classmethod
    def of(
        cls, tz_name: str, holidays: Iterable[dt.date] = (), cutoff_business_days: int = 1
    ) -> BusinessCalendar:
        return cls(ZoneInfo(tz_name), frozenset(holidays), cutoff_business_days)

    def is_business_day(self, day: dt.date) -> bool:
        return day.weekday() < 5 and day not in self.holidays

    def business_days_before(self, day: dt.date, count: int) -> dt.date:
        """The *count*-th business day strictly before *day*."""
        current = day
        remaining = count
        while remaining > 0:
            current -= dt.timedelta(days=1)
            if self.is_business_day(current):
                remaining -= 1
        return current

    def last_day_to_pass(self, cohort: Cohort) -> dt.date:
        """The last local date on which passing the checks still makes *cohort*."""
        return self.business_days_before(cohort.date, self.cutoff_business_days)

    def makes_cohort(self, passed_at: dt.datetime, cohort: Cohort) -> bool:
        return passed_at.astimezone(self.tz).date() <= self.last_day_to_pass(cohort)

    def first_eligible_cohort(self, passed_at: dt.datetime) -> Cohort:
        local = passed_at.astimezone(self.tz).date()
        cohort = Cohort(local.year, local.month, 0)
        while not self.makes_cohort(passed_at, cohort):
            cohort = cohort.next()
        return cohort
