"""The one eviction rule of the local caches: least recently used first, down to the
bound, never an entry used within the grace period."""

from __future__ import annotations

import time

from app.storage.cache import GRACE_S, CacheEntry, evict_least_recent


def test_the_least_recently_used_go_first_and_a_recent_one_stays() -> None:
    removed: list[str] = []
    now = time.time()

    def entry(name: str, age_s: float, size: int) -> CacheEntry:
        return CacheEntry(now - age_s, size, lambda: removed.append(name))

    entries = [
        entry("middle", GRACE_S * 2, 100),
        entry("oldest", GRACE_S * 3, 100),
        entry("in use", GRACE_S / 2, 100),  # the oldest would not be enough: never this
        entry("newest", GRACE_S + 1, 100),
    ]
    evict_least_recent(entries, kept=100, bound=250)
    assert removed == ["oldest", "middle", "newest"]  # 500 → 200; "in use" stays

    removed.clear()
    evict_least_recent(entries, kept=100, bound=500)
    assert removed == []  # within the bound: nothing goes
