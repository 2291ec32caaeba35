"""The lifecycle's rules as pure predicates (app.review.domain.policy)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from app.core.authorization import Actor
from app.core.clocks import ReviewClock
from app.core.cohorts import BusinessCalendar, Cohort
from app.core.lifecycle import PublicationMode
from app.core.lifecycle import SubmissionState as S
from app.core.refusals import Kind, Refusal
from app.publishing.domain.cohorts import current_cohort, may_publish
from app.review.domain.policy import (
    LateWindow,
    PointFacts,
    SubmissionFacts,
    committee_window_start,
    curve_shortfall,
    may_change_embargo,
    may_object,
    may_recheck,
    may_set_point_state,
    may_withdraw,
)

PT = ZoneInfo("America/Los_Angeles")
CHAIR = Actor(chair=True)
OWNER = Actor(own_organization=True)
RIVAL = Actor(committee=True)


def _may_object(*args: Any, **kwargs: Any) -> Refusal | None:
    """The predicate with the rules' late window (90 days after finalization)."""
    return may_object(*args, late=LateWindow(90), **kwargs)


@pytest.mark.parametrize(
    ("facts", "code"),
    [
        (SubmissionFacts(S.CHECK_ERROR), None),
        (SubmissionFacts(S.PASSED_CHECKS), None),  # nothing reviewed or public yet
        (SubmissionFacts(S.REJECTED), "rejected"),  # rules §11.1: resubmit as new
        (SubmissionFacts(S.CHECKING), "checks-running"),
        (SubmissionFacts(S.PASSED_CHECKS, review_started=True), "in-review"),
        (SubmissionFacts(S.PASSED_CHECKS, published=True), "in-review"),
        (SubmissionFacts(S.FINALIZED), "in-review"),
        (SubmissionFacts(S.WITHDRAWN), "closed"),
    ],
)
def test_recheck(facts: SubmissionFacts, code: str | None) -> None:
    refusal = may_recheck(facts)
    assert (refusal.code if refusal else None) == code


def test_withdrawal_is_the_submitters_or_the_chairs_at_any_time_until_terminal() -> None:
    for state in (S.CHECK_ERROR, S.PASSED_CHECKS, S.FINALIZED):
        assert may_withdraw(OWNER, SubmissionFacts(state)) is None
        assert may_withdraw(CHAIR, SubmissionFacts(state)) is None
        assert may_withdraw(RIVAL, SubmissionFacts(state)).kind == Kind.FORBIDDEN  # type: ignore[union-attr]
    for state in (S.REJECTED, S.WITHDRAWN, S.INVALIDATED):
        assert may_withdraw(OWNER, SubmissionFacts(state)).code == "closed"  # type: ignore[union-attr]


def test_point_states() -> None:
    review = SubmissionFacts(S.PASSED_CHECKS, review_started=True)
    final = SubmissionFacts(S.FINALIZED)
    assert may_set_point_state(OWNER, review, "active", "withdrawn") is None
    assert may_set_point_state(OWNER, review, "active", "disputed").code == "not-yours"  # type: ignore[union-attr]
    assert may_set_point_state(CHAIR, review, "active", "disputed") is None
    assert may_set_point_state(CHAIR, review, "disputed", "active") is None
    assert may_set_point_state(CHAIR, review, "withdrawn", "active").code == "point-closed"  # type: ignore[union-attr]
    assert may_set_point_state(CHAIR, review, "active", "invalidated").code == "not-allowed"  # type: ignore[union-attr]
    assert may_set_point_state(CHAIR, final, "active", "invalidated") is None
    assert may_set_point_state(OWNER, final, "active", "withdrawn").code == "not-allowed"  # type: ignore[union-attr]
    assert may_set_point_state(CHAIR, final, "active", "nope").kind == Kind.INVALID  # type: ignore[union-attr]
    # Held in dispute past finalization (rules §11.6): it returns, or is withdrawn.
    assert may_set_point_state(CHAIR, final, "disputed", "active") is None
    assert may_set_point_state(OWNER, final, "disputed", "withdrawn") is None
    assert may_set_point_state(OWNER, final, "disputed", "active").code == "not-yours"  # type: ignore[union-attr]
    assert may_set_point_state(CHAIR, final, "active", "disputed").code == "not-allowed"  # type: ignore[union-attr]


def test_embargo_changes_while_it_holds_something_back() -> None:
    today = dt.date(2026, 12, 1)
    later = dt.date(2026, 12, 20)
    provisional = SubmissionFacts(S.PASSED_CHECKS, mode=PublicationMode.PROVISIONAL)
    assert may_change_embargo(OWNER, provisional, later, today) is None
    assert may_change_embargo(RIVAL, provisional, later, today).kind == Kind.FORBIDDEN  # type: ignore[union-attr]
    out = SubmissionFacts(S.PASSED_CHECKS, mode=PublicationMode.PROVISIONAL, published=True)
    assert may_change_embargo(OWNER, out, later, today).code == "not-allowed"  # type: ignore[union-attr]
    assert may_change_embargo(OWNER, provisional, today, today).code == "bad-embargo"  # type: ignore[union-attr]
    held = SubmissionFacts(S.FINALIZED)
    assert may_change_embargo(OWNER, held, later, today) is None  # mode B: still held


def test_objection_windows() -> None:
    clock = ReviewClock(BusinessCalendar.of("America/Los_Angeles"))
    eligible = dt.datetime(2026, 12, 1, 9, tzinfo=PT)
    review = SubmissionFacts(S.PASSED_CHECKS, review_started=True, eligible_at=eligible)
    assert _may_object(clock, review, eligible + dt.timedelta(days=20), late_ground=False) is None
    week4 = eligible + dt.timedelta(days=22)
    assert _may_object(clock, review, week4, late_ground=True).code == "window-closed"  # type: ignore[union-attr]
    after6 = eligible + dt.timedelta(days=43)
    assert _may_object(clock, review, after6, late_ground=True) is None
    assert _may_object(clock, review, after6, late_ground=False) is not None
    final = SubmissionFacts(S.FINALIZED, finalized_at=eligible)
    assert _may_object(clock, final, eligible + dt.timedelta(days=89), late_ground=True) is None
    settled = _may_object(clock, final, eligible + dt.timedelta(days=91), late_ground=True)
    assert settled is not None and settled.code == "settled"
    waiting = SubmissionFacts(S.PASSED_CHECKS)
    assert _may_object(clock, waiting, eligible, late_ground=True).code == "not-in-review"  # type: ignore[union-attr]


def _points(concurrencies: list[int], offline: bool = True) -> list[PointFacts]:
    def region(c: int) -> str:
        if c <= 32:
            return "low_latency"
        return (
            "low_concurrency" if c < 100 else "med_concurrency" if c < 500 else "high_concurrency"
        )

    points = [PointFacts(c, region(c), "none") for c in concurrencies]
    if offline:
        points.append(PointFacts(2048, None, "dedicated"))
    return points


def test_curve_minimum_and_region_coverage() -> None:
    full = _points([1, 16, 64, 80, 128, 256, 1024])
    assert curve_shortfall(full, agentic=False, max_points=32) is None
    withdrawn = [*full[:2], PointFacts(64, "low_concurrency", "none", "withdrawn"), *full[3:]]
    assert "fewer than the minimum 8" in (curve_shortfall(withdrawn, False, 32) or "")
    no_low = _points([1, 16, 128, 256, 300, 1024, 2000, 4000])
    assert "Low Concurrency" in (curve_shortfall(no_low, agentic=False, max_points=32) or "")
    assert curve_shortfall(_points([1, 16, 64, 80, 128, 256, 1024], False), True, 32) is None


def test_cohort_timing() -> None:
    c0 = Cohort(2026, 12, 0)  # Wednesday 2026-12-02, 08:00 PST
    assert may_publish(c0, dt.datetime(2026, 12, 2, 7, 59, tzinfo=PT), PT).code == "too-early"  # type: ignore[union-attr]
    assert may_publish(c0, dt.datetime(2026, 12, 2, 8, 0, tzinfo=PT), PT) is None
    assert may_publish(c0, dt.datetime(2026, 12, 16, 9, tzinfo=PT), PT).code == "not-current"  # type: ignore[union-attr]
    # Across the DST change (2027-03-14): 08:00 local, whatever the offset.
    march = Cohort(2027, 3, 1)
    assert march.publication_at(PT).utcoffset() == dt.timedelta(hours=-7)
    assert current_cohort(dt.datetime(2027, 3, 17, 14, 59, tzinfo=dt.UTC), PT) == Cohort(2027, 3, 0)
    assert current_cohort(dt.datetime(2027, 3, 17, 15, 0, tzinfo=dt.UTC), PT) == march


def test_committee_window_is_six_months_or_twelve_cohorts_whichever_is_longer() -> None:
    # rules §4.4's example: 2026-12-C1 counts from 2026-06-01.
    assert committee_window_start(Cohort(2026, 12, 1), 6, 12) == dt.date(2026, 6, 1)


def test_the_late_window_lasts_until_the_later_of_90_days_and_the_next_audit_vote() -> None:
    final = dt.datetime(2027, 1, 4, 12, tzinfo=dt.UTC)
    days = final + dt.timedelta(days=90)
    assert LateWindow(90).closes(final) == days
    # A round is open and its vote still to come: not settled yet.
    assert LateWindow(90, vote_pending=True).closes(final) is None
    earlier = (final - dt.timedelta(days=1), final + dt.timedelta(days=20))
    assert LateWindow(90, earlier).closes(final) == days
    later = final + dt.timedelta(days=120)
    assert LateWindow(90, (later,), vote_pending=True).closes(final) == later
