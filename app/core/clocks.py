"""Review clocks (rules §11.3): phases from the review eligibility date, business-day
response deadlines, and the non-response penalty ladder.

Days are counted on the cohort time zone's calendar (America/Los_Angeles) and every
deadline falls at 11:59 PM there. Day 1 of the review is the review eligibility date, so
peer review (Weeks 1–3) closes at the end of day 21 and objection resolution (Weeks 4–6)
at the end of day 42. A business-day clock started on some day counts the business days
*after* that day: an objection filed on a Monday with 3 business days to answer is due at
the end of Thursday.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from app.core.cohorts import BusinessCalendar
from app.core.lifecycle import ReviewPhase

END_OF_DAY = dt.time(23, 59, 59)


@dataclass(frozen=True)
class Penalty:
    """What *business_days* without the submitter's answer cost (rules §11.3)."""

    business_days: int
    delay_cohorts: int  # cohort dates the finalization is delayed by
    withdraw: bool = False


@dataclass(frozen=True)
class ReviewRules:
    """The review windows and clocks; every number here is configurable (rules §15)."""

    peer_review_days: int = 21
    resolution_days: int = 42
    submitter_business_days: int = 3
    objector_business_days: int = 2
    penalties: tuple[Penalty, ...] = (
        Penalty(3, 1),
        Penalty(6, 2),
        Penalty(10, 0, withdraw=True),
    )
    embargo_max_days: int = 60  # finalized results held at most this long (rules §4.2)
    meeting_business_days: int = 12  # an objection this old may call a meeting (§11.3)
    dispute_backstop_weeks: int = 8  # the chair decides on the record after (§11.6)


@dataclass(frozen=True)
class ReviewClock:
    calendar: BusinessCalendar
    rules: ReviewRules = ReviewRules()

    def local_date(self, moment: dt.datetime) -> dt.date:
        return moment.astimezone(self.calendar.tz).date()

    def end_of(self, day: dt.date) -> dt.datetime:
        """11:59 PM in the cohort time zone on *day*, as an aware datetime."""
        return dt.datetime.combine(day, END_OF_DAY, tzinfo=self.calendar.tz)

    def day_end(self, start: dt.datetime, day_number: int) -> dt.datetime:
        """The end of day *day_number* when *start* is day 1."""
        return self.end_of(self.local_date(start) + dt.timedelta(days=day_number - 1))

    def peer_review_closes(self, eligible_at: dt.datetime) -> dt.datetime:
        return self.day_end(eligible_at, self.rules.peer_review_days)

    def resolution_closes(self, eligible_at: dt.datetime) -> dt.datetime:
        return self.day_end(eligible_at, self.rules.resolution_days)

    def phase(
        self, eligible_at: dt.datetime, now: dt.datetime, open_objections: bool
    ) -> ReviewPhase:
        """The phase by the calendar: disputes only exist while objections are open."""
        if now <= self.peer_review_closes(eligible_at):
            return ReviewPhase.PEER_REVIEW
        if now <= self.resolution_closes(eligible_at):
            return ReviewPhase.OBJECTION_RESOLUTION
        return ReviewPhase.DISPUTE if open_objections else ReviewPhase.OBJECTION_RESOLUTION

    def business_deadline(self, start: dt.datetime, business_days: int) -> dt.datetime:
        """The end of the *business_days*-th business day after *start*'s day."""
        day = self.local_date(start)
        remaining = business_days
        while remaining > 0:
            day += dt.timedelta(days=1)
            if self.calendar.is_business_day(day):
                remaining -= 1
        return self.end_of(day)

    def business_days_elapsed(self, start: dt.datetime, now: dt.datetime) -> int:
        """Business days after *start*'s day that have fully ended by *now*."""
        if now <= start:
            return 0
        day = self.local_date(start)
        last = self.local_date(now)
        count = 0
        while day < last:
            day += dt.timedelta(days=1)
            if self.calendar.is_business_day(day) and self.end_of(day) < now:
                count += 1
        return count

    def penalty_due(self, filed_at: dt.datetime, now: dt.datetime) -> tuple[int, Penalty | None]:
        """The highest penalty step reached without an answer: (its index + 1, step)."""
        elapsed = self.business_days_elapsed(filed_at, now)
        reached = [p for p in self.rules.penalties if elapsed >= p.business_days]
        if not reached:
            return 0, None
        return len(reached), reached[-1]

    def embargo_release(self, embargo: dt.date, finalized_at: dt.datetime) -> dt.date:
        """A finalized result is held until its embargo date, 60 days at most (§4.2)."""
        latest = self.local_date(finalized_at) + dt.timedelta(days=self.rules.embargo_max_days)
        return min(embargo, latest)
