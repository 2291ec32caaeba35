"""Request timings of a known shape, for the steady-state analysis and its review."""

from __future__ import annotations

import numpy as np

from harness.metrics.timings import Timings

MS = 1_000_000


def timings(
    n: int,
    tpot_ms: object = 5.0,
    *,
    seed: int = 0,
    gap_ms: object = 50.0,
    fail: object = None,
    noise: float = 0.02,
    unfinished: object = None,
) -> Timings:
    """*n* requests issued every ``gap_ms`` (a function of the request's index, or a
    number), each 100 tokens after a 30 ms first chunk at ``tpot_ms`` (likewise), with
    a little lognormal noise; ``fail(i)`` marks failed requests, ``unfinished(i)`` those
    issued and never completed."""
    rng = np.random.default_rng(seed)
    index = np.arange(n)

    def per(value: object) -> np.ndarray:
        return np.array([value(i) for i in index]) if callable(value) else np.full(n, value)

    issued = np.cumsum(per(gap_ms) * MS).astype(np.int64)
    first = issued + (30 * rng.lognormal(0, noise, n) * MS).astype(np.int64)
    after = np.full(n, 100, dtype=np.int64)
    done = first + (per(tpot_ms) * rng.lognormal(0, noise, n) * MS * after).astype(np.int64)
    failed = np.zeros(n, bool)
    if callable(fail):
        failed = np.array([bool(fail(i)) for i in index], dtype=bool)
    first = np.where(failed, -1, first)
    gone = np.zeros(n, bool)
    if callable(unfinished):
        gone = np.array([bool(unfinished(i)) for i in index], dtype=bool)
    kept = ~gone
    return Timings(
        issued[kept], first[kept], done[kept], (after + 1)[kept], after[kept], failed[kept],
        issued[gone],
    )  # fmt: skip
