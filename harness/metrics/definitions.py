"""Metric definitions of the official client (harness-metrics digest §4), in one place.

Percentiles use the ``lower`` method (``sorted[floor(p/100·(n−1))]``) with decimal-string
keys; histograms have 30 log-spaced buckets spanning at least one decade; ``std_dev`` is
the sample standard deviation. The portal's re-tokenization calls this same code.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

PERCENTILES: tuple[float, ...] = (
    99.9, 99.0, 97.0, 95.0, 90.0, 80.0, 75.0, 50.0, 25.0, 10.0, 5.0, 1.0,
)  # fmt: skip
HISTOGRAM_BUCKETS = 30


def percentile_lower(sorted_values: Sequence[float] | npt.NDArray[np.float64], p: float) -> float:
    """numpy's ``method="lower"``: the value at ``floor(p/100 · (n−1))``, no interpolation."""
    if len(sorted_values) == 0:  # a list or a numpy array
        raise ValueError("percentile of an empty series")
    index = math.floor(p / 100 * (len(sorted_values) - 1))
    return sorted_values[index]  # as stored: an int series keeps int percentiles


def percentile_key(p: float) -> str:
    """Keys as the official summary writes them: ``str(float)``, e.g. ``"90.0"``."""
    return str(float(p))


def log_histogram(
    sorted_values: Sequence[float], buckets: int = HISTOGRAM_BUCKETS
) -> dict[str, Any]:
    """30 log-spaced buckets from ``max(min, 1)`` to ``max(max, 10·lo)``, values clipped in.

    A value belongs to the bucket whose lower edge it reaches and whose upper edge it does
    not (the last bucket is closed); the values are sorted, so each bucket's count is the
    distance between two bisections, not a pass over every value."""
    lo = max(sorted_values[0], 1.0)
    hi = max(sorted_values[-1], 10 * lo)
    log_lo, log_hi = math.log(lo), math.log(hi)
    edges = [math.exp(log_lo + i * (log_hi - log_lo) / buckets) for i in range(buckets + 1)]
    # Below the first edge is clipped into the first bucket, above the last into the last.
    below = [
        0,
        *(bisect_left(sorted_values, edge) for edge in edges[1:buckets]),
        len(sorted_values),
    ]
    return {
        "buckets": [[edges[i], edges[i + 1]] for i in range(buckets)],
        "counts": [below[i + 1] - below[i] for i in range(buckets)],
    }


def stat_block(values: Sequence[float], integer: bool = False) -> dict[str, Any]:
    """The official stat block: total, min, max, median, avg, std_dev, percentiles,
    histogram. An empty series gives ``{}``."""
    if not values:
        return {}
    ordered = sorted(values)
    n = len(ordered)
    total = sum(ordered)
    if n > 1:
        if integer:
            sum_sq = sum(v * v for v in ordered)
            std = math.sqrt(max(0, n * sum_sq - total * total)) / math.sqrt(n * (n - 1))
        else:
            mean = total / n
            std = math.sqrt(max(0.0, sum((v - mean) ** 2 for v in ordered) / (n - 1)))
    else:
        std = 0.0
    percentiles = {percentile_key(p): percentile_lower(ordered, p) for p in PERCENTILES}
    return {
        "total": total,
        "min": ordered[0],
        "max": ordered[-1],
        "median": percentiles["50.0"],
        "avg": total / n,
        "std_dev": std,
        "percentiles": percentiles,
        "histogram": log_histogram(ordered),
    }


def rate(count: float, duration_ns: float) -> float | None:
    return count / (duration_ns / 1e9) if duration_ns > 0 else None


def histogram_distance(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """The Kolmogorov–Smirnov distance between two of the summary's histograms (``buckets``
    of ``[lo, hi]`` and their ``counts``): the largest gap between their cumulative shares,
    each spread evenly in log space within its buckets, over every edge of both. Their
    buckets need not agree (each run's span sets its own). 0: the same shape; 1: apart.
    None when either is empty."""
    edges = sorted({e for h in (a, b) for bucket in h.get("buckets", ()) for e in bucket})
    if not edges or not sum(a.get("counts", ())) or not sum(b.get("counts", ())):
        return None
    return max(abs(_share_below(a, x) - _share_below(b, x)) for x in edges)


def _share_below(histogram: dict[str, Any], x: float) -> float:
    total = below = 0.0
    for (lo, hi), count in zip(histogram["buckets"], histogram["counts"], strict=True):
        total += count
        if x >= hi:
            below += count
        elif x > lo > 0:
            below += count * math.log(x / lo) / math.log(hi / lo)
    return below / total
