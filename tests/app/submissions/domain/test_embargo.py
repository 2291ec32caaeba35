"""The embargo date a submitter asks for (app.submissions.domain.embargo)."""

from __future__ import annotations

import datetime as dt

from app.submissions.domain.embargo import embargo_refusal, latest_embargo


def test_an_embargo_holds_a_result_at_most_60_days_after_its_review() -> None:
    """Rules §4.2: a date past what can hold the result is refused, with the rule, not cut."""
    today = dt.date(2026, 12, 3)
    in_review = latest_embargo(today, None, resolution_days=42, max_days=60)
    assert in_review == dt.date(2027, 3, 15)  # Week 6 at the latest, then 60 days
    finalized = latest_embargo(today, dt.date(2026, 12, 1), resolution_days=42, max_days=60)
    assert finalized == dt.date(2027, 1, 30)
    assert embargo_refusal(dt.date(2027, 1, 30), today, finalized) is None
    too_late = embargo_refusal(dt.date(2028, 1, 1), today, finalized)
    assert too_late is not None and too_late.code == "bad-embargo" and "§4.2" in too_late.message
    past = embargo_refusal(today, today, finalized)
    assert past is not None and "not in the future" in past.message
