"""The embargo date a submitter asks for (rules §4.2): at upload, or changed later."""

from __future__ import annotations

import datetime as dt

from app.core.refusals import Kind, Refusal


def latest_embargo(
    today: dt.date, finalized_on: dt.date | None, *, resolution_days: int, max_days: int
) -> dt.date:
    """The latest embargo date that can hold a result (rules §4.2): a finalized result is
    held at most *max_days* after its review completed; before that, review completes by
    the end of the resolution window (Week 6) at the latest."""
    if finalized_on is not None:
        return finalized_on + dt.timedelta(days=max_days)
    return today + dt.timedelta(days=resolution_days + max_days)


def embargo_refusal(embargo: dt.date, today: dt.date, latest: dt.date) -> Refusal | None:
    """Why *embargo* cannot be the date (at upload or changed later): not in the future,
    or beyond what rules §4.2 lets hold a result."""
    if embargo <= today:
        return Refusal(
            "bad-embargo", f"the embargo date {embargo} is not in the future", Kind.INVALID
        )
    if embargo > latest:
        return Refusal(
            "bad-embargo",
            f"the embargo date {embargo} is after {latest}, the latest a result may be held "
            "(rules §4.2: at most 60 days after its review completes)",
            Kind.INVALID,
        )
    return None
