"""Local caches of stored objects (an S3 store's local copies, each host's extracted
bundles), kept to a bound: the least recently used go first."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# An entry used this recently is never evicted: another process may be about to open it.
GRACE_S = 600


@dataclass(frozen=True)
class CacheEntry:
    used: float  # when it was last used (its mtime)
    size: int  # bytes
    remove: Callable[[], None]


def evict_least_recent(entries: Sequence[CacheEntry], kept: int, bound: int) -> None:
    """Remove *entries*, least recently used first, until they and the *kept* bytes (the
    entry just used) fit in *bound*; none used within the last ``GRACE_S`` goes."""
    total = kept + sum(entry.size for entry in entries)
    now = time.time()
    for entry in sorted(entries, key=lambda e: e.used):
        if total <= bound:
            break
        if now - entry.used >= GRACE_S:
            entry.remove()
            total -= entry.size
