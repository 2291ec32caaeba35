"""The record's events a subscriber is told of, the body each delivery carries, and when
a failed delivery is tried again."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

# Ledger kinds (app.publishing.domain.ledger) and the event types they are delivered as.
EVENTS: Mapping[str, str] = {
    "release": "cohort.released",
    "invalidation": "result.invalidated",
    "withdrawal": "result.withdrawn",
    "preview-expiry": "result.preview_expired",
}
EVENT_TYPES = tuple(EVENTS.values())

# After the first attempt fails, the waits before each next one; past the last, the
# delivery has failed (about eight hours in all).
RETRY_AFTER_S = (30, 120, 600, 1800, 7200, 21600)


def retry_at(attempts: int, now: dt.datetime) -> dt.datetime | None:
    """When to try again after *attempts* failed ones; None: no more tries."""
    if attempts > len(RETRY_AFTER_S):
        return None
    return now + dt.timedelta(seconds=RETRY_AFTER_S[attempts - 1])


def wants(events: list[str], benchmark: str | None, event: str, benchmarks: set[str]) -> bool:
    """A subscription to *events* (of *benchmark*, or all) is told of *event*, which
    concerns *benchmarks* (none: a whole cohort, told to every subscription of its type
    unless the cohort holds none of the benchmark's results)."""
    if event not in events:
        return False
    return benchmark is None or benchmark in benchmarks


def payload(
    event: str, entry: Mapping[str, Any], base_url: str, paths: Mapping[str, str]
) -> dict[str, Any]:
    """The body of a delivery: the event, when the change was made, and the ledger entry
    it comes from (its number, digest, summary and where to check it), with links."""
    base = base_url.rstrip("/")
    return {
        "type": event,
        "timestamp": entry["at"],
        "data": {
            "seq": entry["seq"],
            "kind": entry["kind"],
            "subject": entry["subject"],
            "summary": entry["summary"],
            "digest": entry["digest"],
            "links": {name: base + path for name, path in paths.items()},
        },
    }
