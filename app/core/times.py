"""How a moment is written for people: in the cohorts' zone, with its abbreviation.

Review clocks and cohort cutoffs run on Pacific time (rules §11.3); a deadline printed in
UTC in one line and in Pacific time in the next is read wrong. Stored times are UTC.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from zoneinfo import ZoneInfo

# What tells a service the time: utcnow in production, a set moment in tests and demos.
Clock = Callable[[], dt.datetime]


def as_utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def utc_text(moment: dt.datetime) -> str:
    """'2026-12-02T16:00:00Z': a moment as machines exchange it (Atom, the ledger)."""
    return as_utc(moment).isoformat().replace("+00:00", "Z")


def local_text(moment: dt.datetime, zone: str) -> str:
    """'2026-12-02 08:00 PST'."""
    local = as_utc(moment).astimezone(ZoneInfo(zone))
    return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"
