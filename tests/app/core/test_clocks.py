"""Review clocks (rules §11.3): windows, business-day deadlines with holidays, penalties."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from app.core.clocks import ReviewClock
from app.core.cohorts import BusinessCalendar, Cohort
from app.core.lifecycle import ReviewPhase

PT = ZoneInfo("America/Los_Angeles")
THANKSGIVING = dt.date(2026, 11, 26)
CLOCK = ReviewClock(BusinessCalendar.of("America/Los_Angeles", [THANKSGIVING]))


def pt(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute, second, tzinfo=PT)


def test_peer_review_closes_at_the_end_of_day_21_pacific() -> None:
    eligible = pt(2026, 11, 2, 10)  # a Monday: day 1
    closes = CLOCK.peer_review_closes(eligible)
    assert closes == pt(2026, 11, 22, 23, 59, 59)
    assert CLOCK.phase(eligible, closes, open_objections=False) == ReviewPhase.PEER_REVIEW
    after = closes + dt.timedelta(seconds=1)
    assert CLOCK.phase(eligible, after, open_objections=True) == ReviewPhase.OBJECTION_RESOLUTION
    week6 = CLOCK.resolution_closes(eligible)
    assert week6 == pt(2026, 12, 13, 23, 59, 59)
    beyond = week6 + dt.timedelta(seconds=1)
    assert CLOCK.phase(eligible, beyond, open_objections=True) == ReviewPhase.DISPUTE
    # Without open objections there is no dispute.
    assert CLOCK.phase(eligible, beyond, open_objections=False) == ReviewPhase.OBJECTION_RESOLUTION


def test_deadlines_skip_weekends_and_holidays() -> None:
    # Filed Tuesday before Thanksgiving: Wed 25, (Thu 26 holiday), Fri 27, Mon 30.
    filed = pt(2026, 11, 24, 16)
    assert CLOCK.business_deadline(filed, 3) == pt(2026, 11, 30, 23, 59, 59)
    no_holiday = ReviewClock(BusinessCalendar.of("America/Los_Angeles"))
    assert no_holiday.business_deadline(filed, 3) == pt(2026, 11, 27, 23, 59, 59)
    # Filed on a Friday evening: the clock starts on Monday.
    assert CLOCK.business_deadline(pt(2026, 12, 4, 22), 2) == pt(2026, 12, 8, 23, 59, 59)


def test_a_day_counts_only_once_it_has_ended_in_pacific_time() -> None:
    filed = pt(2026, 12, 1, 9)  # Tuesday
    assert CLOCK.business_days_elapsed(filed, pt(2026, 12, 2, 23, 59, 58)) == 0
    assert CLOCK.business_days_elapsed(filed, pt(2026, 12, 3, 0, 0, 1)) == 1
    # 23:30 PT on Dec 4 is already Dec 5 in UTC: UTC dates must not count early.
    late = pt(2026, 12, 4, 23, 30).astimezone(dt.UTC)
    assert CLOCK.business_days_elapsed(filed, late) == 2
    assert CLOCK.business_days_elapsed(filed, filed - dt.timedelta(hours=1)) == 0


@pytest.mark.parametrize(
    ("now", "level", "delay", "withdraw"),
    [
        (pt(2026, 11, 30, 12), 0, None, False),  # 2 business days ended (25, 27)
        (pt(2026, 12, 1, 0, 0, 1), 1, 1, False),  # Mon 30 ended: 3 → one cohort
        (pt(2026, 12, 4, 0, 0, 1), 2, 2, False),  # 6 business days → two cohorts
        (pt(2026, 12, 9, 23, 59), 2, 2, False),  # the 10th business day is not over
        (pt(2026, 12, 10, 0, 0, 1), 3, 0, True),  # 10 business days → withdrawn
    ],
)
def test_penalties_accumulate_with_business_days(
    now: dt.datetime, level: int, delay: int | None, withdraw: bool
) -> None:
    reached, step = CLOCK.penalty_due(pt(2026, 11, 24, 16), now)
    assert reached == level
    if step is None:
        assert delay is None
    else:
        assert (step.delay_cohorts, step.withdraw) == (delay, withdraw)


def test_embargo_holds_a_finalized_result_60_days_at_most() -> None:
    finalized = pt(2026, 12, 1, 10)
    assert CLOCK.embargo_release(dt.date(2026, 12, 20), finalized) == dt.date(2026, 12, 20)
    assert CLOCK.embargo_release(dt.date(2027, 6, 1), finalized) == dt.date(2027, 1, 30)


def test_cohort_on_or_before_a_date() -> None:
    assert str(Cohort.on_or_before(dt.date(2026, 11, 18))) == "2026-11-C1"
    assert str(Cohort.on_or_before(dt.date(2026, 11, 17))) == "2026-11-C0"
    assert str(Cohort.on_or_before(dt.date(2027, 1, 5))) == "2026-12-C1"
    assert str(Cohort.parse("2027-01-C0").previous()) == "2026-12-C1"  # type: ignore[union-attr]
