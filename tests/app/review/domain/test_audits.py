"""The audit rule's arithmetic (rules §11.12): the ranked-choice count, the quota, when a
result may be nominated, the die, and the deadlines from selection."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from app.core.policy import AuditTerms
from app.review.domain.audits import (
    NONE_SELECTED,
    Way,
    audit_deadlines,
    die_selects,
    drawable,
    nomination_problem,
    quarter_of,
    quota_problem,
    ranked_choice,
)

TERMS = AuditTerms()


def test_ranked_choice_moves_dropped_options_votes_on() -> None:
    ballots = [["a", "b"], ["a"], ["b", "a"], ["c", "b"], ["c", "b"]]
    # a 2, b 1, c 2: b is dropped and its ballot goes to a, which then has 3 of 5.
    tally = ranked_choice(ballots)
    assert tally.winner == "a" and tally.rounds == [{"a": 2, "b": 1, "c": 2}, {"a": 3, "c": 2}]
    assert ranked_choice([["x"], [NONE_SELECTED], [NONE_SELECTED]]).winner == NONE_SELECTED
    # Two against two with nothing to move: no majority (the chairs pick at random).
    assert ranked_choice([["a"], ["a"], ["b"], ["b"]]).winner is None
    assert ranked_choice([]).winner is None


@given(st.lists(st.permutations(["a", "b", "c", NONE_SELECTED]).map(lambda p: p[:2]),
                min_size=1, max_size=15))  # fmt: skip
def test_a_winner_always_holds_a_majority_of_the_last_count(ballots: list[list[str]]) -> None:
    tally = ranked_choice(ballots)
    if tally.winner is not None:
        last = tally.rounds[-1]
        assert last[tally.winner] * 2 > sum(last.values())


def test_the_quota_is_eight_a_year_two_a_quarter_one_of_each_kind() -> None:
    assert quota_problem(0, Counter(), Way.VOTE, TERMS) is None
    assert "nominated audit already" in (
        quota_problem(1, Counter(nominated=1), Way.CHAIRS, TERMS) or ""
    )
    assert quota_problem(1, Counter(nominated=1), Way.RANDOM, TERMS) is None
    assert "quarter's 2 audits" in (
        quota_problem(2, Counter(nominated=1, random=1), Way.RANDOM, TERMS) or ""
    )
    assert "year's 8 audits" in (quota_problem(8, Counter(), Way.RANDOM, TERMS) or "")


def test_a_result_is_nominated_from_four_weeks_after_publication() -> None:
    published = dt.date(2026, 12, 2)
    assert "on 2026-12-30" in (nomination_problem(published, dt.date(2026, 12, 29), TERMS) or "")
    assert nomination_problem(published, dt.date(2026, 12, 30), TERMS) is None
    assert nomination_problem(None, dt.date(2026, 12, 30), TERMS) is not None


def test_the_die_and_the_calendar() -> None:
    assert [die_selects(r, TERMS) for r in range(1, 7)] == [False] * 5 + [True]
    assert (
        quarter_of(dt.date(2027, 3, 31)) == "2027-Q1"
        and quarter_of(dt.date(2027, 4, 1)) == "2027-Q2"
    )
    due = audit_deadlines(dt.date(2027, 1, 4), TERMS, nda_executed=dt.date(2027, 1, 15))
    assert (due.auditor_by, due.nda_provided_by, due.nda_executed_by) == (
        dt.date(2027, 2, 1), dt.date(2027, 1, 11), dt.date(2027, 1, 18))  # fmt: skip
    assert due.report_by == dt.date(2027, 2, 14) and due.complete_by == dt.date(2027, 3, 5)
    assert due.redacted_by is None


def test_the_die_never_picks_a_system_equivalent_to_last_rounds_audit() -> None:
    candidates = {"b": {"h100x8"}, "a": {"h100x8", "mi300x8"}, "c": {"gaudi3x8"}}
    assert drawable(candidates, {"h100x8"}) == ["c"]
    assert drawable(candidates, set()) == ["a", "b", "c"]
