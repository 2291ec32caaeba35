"""Small in-process caches of read models that never change once written."""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(cache: dict[K, V], size: int, key: K, value: V) -> V:
    """Keeps *value* in *cache* under *key*, dropping the oldest entries past *size*;
    requests run in threads, so another may have just dropped one."""
    while len(cache) >= size:
        try:
            cache.pop(next(iter(cache)), None)
        except (StopIteration, RuntimeError):
            break  # emptied, or changed while read: the next insertion evicts again
    cache[key] = value
    return value
