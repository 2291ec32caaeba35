"""Rate limits on sign-in and uploads: a sliding window per client and action.

Counts live in the web process: with several web processes each counts its own share,
so a deployment's limit is at most the setting times the process count. Enough to stop a
password-guessing loop or an upload flood from one client; not a distributed quota.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

from fastapi import HTTPException, Request

# Idle clients are forgotten once this many are counted, each by its own window.
MAX_KEYS = 100_000


class RateLimiter:
    def __init__(
        self, clock: Callable[[], float] = time.monotonic, max_keys: int = MAX_KEYS
    ) -> None:
        self._clock = clock
        # (action, client): the action's window, and the times of its attempts.
        self._hits: dict[tuple[str, str], tuple[float, deque[float]]] = {}
        self._max_keys = max_keys
        self._lock = threading.Lock()

    def hit(
        self, action: str, client: str, limit: int, window_s: float, *, count: bool = True
    ) -> float | None:
        """Count one attempt (``count=False``: only ask); None when allowed, else the
        seconds until the next one is."""
        if limit <= 0:
            return None
        now = self._clock()
        with self._lock:
            _, hits = self._hits.setdefault((action, client), (window_s, deque()))
            while hits and hits[0] <= now - window_s:
                hits.popleft()
            if len(hits) >= limit:
                return hits[0] + window_s - now
            if not count:
                return None
            hits.append(now)
            if len(self._hits) > self._max_keys:
                self._forget_idle(now)
            return None

    def _forget_idle(self, now: float) -> None:
        """Forget the clients whose last attempt is older than their own action's window
        (a burst of sign-ins must not wipe the hour-long upload counts)."""
        self._hits = {
            key: (window, hits)
            for key, (window, hits) in self._hits.items()
            if hits and hits[-1] > now - window
        }


def client_key(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def enforce(
    request: Request,
    action: str,
    limit: int,
    window_s: float,
    key: str | None = None,
    *,
    count: bool = True,
) -> None:
    """429 once *limit* attempts in *window_s* were counted for this client (or *key*);
    ``count=False`` refuses a blocked one without counting this attempt."""
    limiter: RateLimiter = request.app.state.rate_limiter
    wait = limiter.hit(action, key or client_key(request), limit, window_s, count=count)
    if wait is not None:
        seconds = max(1, math.ceil(wait))
        raise HTTPException(
            429,
            detail=f"too many {action} attempts; try again in {seconds} s",
            headers={"Retry-After": str(seconds)},
        )
