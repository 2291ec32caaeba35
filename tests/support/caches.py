"""For tests that change the public record behind its back (an edit no publication
makes): the portal keeps what it read of it, keyed by what publications change."""

from __future__ import annotations

from app.results.services import public, results


def forget_read_records() -> None:
    public._RECORDS.clear()
    public._WRITTEN.clear()
    public._SNAPSHOTS.clear()
    results._CACHE.clear()
