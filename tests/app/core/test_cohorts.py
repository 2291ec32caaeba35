"""Cohort dates and the one-business-day cutoff (rules §4.1)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.cohorts import BusinessCalendar, Cohort

PT = ZoneInfo("America/Los_Angeles")


@pytest.mark.parametrize(
    ("cohort", "date"),
    [
        ("2026-10-C0", "2026-10-07"),
        ("2026-10-C1", "2026-10-21"),
        ("2026-11-C0", "2026-11-04"),
        ("2026-11-C1", "2026-11-18"),
        ("2026-12-C0", "2026-12-02"),
        ("2026-12-C1", "2026-12-16"),
        ("2027-01-C0", "2027-01-06"),
        ("2027-01-C1", "2027-01-20"),
        ("2027-02-C0", "2027-02-03"),
        ("2027-02-C1", "2027-02-17"),
    ],
)
def test_cohort_dates_match_the_rules_table(cohort: str, date: str) -> None:
    parsed = Cohort.parse(cohort)
    assert parsed is not None
    assert parsed.date == dt.date.fromisoformat(date)
    assert parsed.date.weekday() == 2
    assert str(parsed) == cohort


@pytest.mark.parametrize(
    "text", ["2026-10-c1", "2026-10-C2", "26-10-C1", "2026-13-C0", "2026-00-C0", ""]
)
def test_malformed_ids_do_not_parse(text: str) -> None:
    assert Cohort.parse(text) is None


def test_succession_wraps_the_year() -> None:
    c = Cohort(2026, 12, 0)
    assert [str(c := c.next()) for _ in range(3)] == ["2026-12-C1", "2027-01-C0", "2027-01-C1"]
    start = Cohort(2026, 10, 1)
    later = start
    for _ in range(24):
        later = later.next()
    assert later == Cohort(2027, 10, 1)


def test_publication_is_at_eight_pacific() -> None:
    at = Cohort(2026, 12, 0).publication_at(PT)
    assert at.isoformat() == "2026-12-02T08:00:00-08:00"


def test_passing_on_the_tuesday_makes_the_wednesday_cohort() -> None:
    cal = BusinessCalendar.of("America/Los_Angeles")
    cohort = Cohort(2026, 12, 0)  # Wed 2026-12-02
    assert cal.last_day_to_pass(cohort) == dt.date(2026, 12, 1)
    assert cal.makes_cohort(dt.datetime(2026, 12, 1, 23, 59, tzinfo=PT), cohort)
    assert not cal.makes_cohort(dt.datetime(2026, 12, 2, 0, 1, tzinfo=PT), cohort)
    # 07:30 UTC on Wednesday is still Tuesday evening in California.
    assert cal.makes_cohort(dt.datetime(2026, 12, 2, 7, 30, tzinfo=dt.UTC), cohort)


def test_a_holiday_moves_the_cutoff_back() -> None:
    cal = BusinessCalendar.of("America/Los_Angeles", holidays=[dt.date(2026, 12, 1)])
    cohort = Cohort(2026, 12, 0)
    assert cal.last_day_to_pass(cohort) == dt.date(2026, 11, 30)
    assert not cal.makes_cohort(dt.datetime(2026, 12, 1, 9, 0, tzinfo=PT), cohort)


def test_weekends_are_not_business_days() -> None:
    cal = BusinessCalendar.of("America/Los_Angeles", cutoff_business_days=3)
    # Three business days before Wed 2026-12-02: Tue 1, Mon 30, then Fri 27 (skipping the weekend).
    assert cal.last_day_to_pass(Cohort(2026, 12, 0)) == dt.date(2026, 11, 27)


def test_first_eligible_cohort_rolls_forward() -> None:
    cal = BusinessCalendar.of("America/Los_Angeles")
    assert str(cal.first_eligible_cohort(dt.datetime(2026, 11, 30, 12, tzinfo=PT))) == "2026-12-C0"
    assert str(cal.first_eligible_cohort(dt.datetime(2026, 12, 2, 9, tzinfo=PT))) == "2026-12-C1"
    assert str(cal.first_eligible_cohort(dt.datetime(2026, 12, 29, 9, tzinfo=PT))) == "2027-01-C0"


@given(year=st.integers(1970, 2200), month=st.integers(1, 12), index=st.integers(0, 1))
def test_ids_round_trip_and_dates_are_wednesdays(year: int, month: int, index: int) -> None:
    cohort = Cohort(year, month, index)
    assert Cohort.parse(str(cohort)) == cohort
    assert cohort.date.weekday() == 2 and cohort.date.month == month
    assert cohort.next().previous() == cohort and cohort.next() > cohort
    assert Cohort.on_or_before(cohort.date) == cohort


@given(text=st.text(max_size=20))
def test_any_text_parses_to_nothing_or_to_itself(text: str) -> None:
    cohort = Cohort.parse(text)
    assert cohort is None or str(cohort) == text.strip()
