"""What happened during a run, over time: a point's requests binned on the run's clock.

Built from the tracked requests' timings the summary collects (``timings.py``), so it
needs no second pass over ``events.jsonl`` and agrees with the summary's counts. Per
bin: requests issued, completed and failed (by the time they ended), requests in flight
at the bin's end, output tokens/s (each response's tokens after its first chunk spread
evenly over its streaming time, the first chunk's at its arrival), and TTFT and TPOT P50
and P90 of the responses that ended in the bin (the official ``lower`` percentile; TPOT
over its valid samples). The bins are whole seconds, widened so that a long run has at
most ``MAX_BINS`` of them. ``last_issue_s`` marks where issuing stopped and the drain
began. The result is plain JSON: a few tens of KB however large the events file.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.metrics.definitions import percentile_lower
from harness.metrics.timings import Timings

MAX_BINS = 1200
Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def run_time_series(t: Timings) -> dict[str, Any] | None:
    """The run over time (module docstring); None when no request was tracked."""
    if not len(t.issued):
        return None
    return bin_requests(t.issued, t.first, t.done, t.tokens, t.after, t.failed)


def _lower(values: Floats, p: float) -> float:
    return float(percentile_lower(np.sort(values).tolist(), p))


def _rounded(values: Floats | list[float | None], digits: int) -> list[float | None]:
    return [None if v is None or not math.isfinite(v) else round(float(v), digits) for v in values]


def _tokens_per_bin(
    first: Ints,
    done: Ints,
    tokens: Ints,
    after: Ints,
    has_first: npt.NDArray[np.bool_],
    streaming: npt.NDArray[np.bool_],
    edges: Ints,
) -> npt.NDArray[np.float64]:
    """Output tokens per bin between *edges*: a response's first chunk at its arrival,
    the tokens after it spread evenly over its streaming time."""
    start, n = int(edges[0]), len(edges) - 1
    width = int(edges[1] - edges[0])
    tokens_at_bin = np.zeros(n, dtype=np.float64)
    firsts = has_first & ~streaming
    np.add.at(tokens_at_bin, np.clip((first[firsts] - start) // width, 0, n - 1), tokens[firsts])
    heads = has_first & streaming
    np.add.at(
        tokens_at_bin,
        np.clip((first[heads] - start) // width, 0, n - 1),
        (tokens[heads] - after[heads]).clip(min=0),
    )
    if streaming.any():
        a, b = first[streaming].astype(np.float64), done[streaming].astype(np.float64)
        rate = after[streaming] / (b - a)
        points = np.concatenate([a, b])
        slope = np.concatenate([rate, -rate])
        order = np.argsort(points, kind="stable")
        points, slope = points[order], np.cumsum(slope[order])
        cumulative = np.concatenate([[0.0], np.cumsum(slope[:-1] * np.diff(points))])
        at_edges = np.interp(edges.astype(np.float64), points, cumulative)
        tokens_at_bin += np.diff(at_edges)
    return tokens_at_bin


def _latency_per_bin(
    ttft_ms: npt.NDArray[np.float64],
    tpot_ms: npt.NDArray[np.float64],
    ended_in: Ints,
    ok: npt.NDArray[np.bool_],
    n: int,
) -> dict[str, list[float | None]]:
    """TTFT and TPOT P50/P90 of the successful responses that ended in each of *n* bins."""
    stats: dict[str, list[float | None]] = {
        k: [None] * n for k in ("ttft_p50_ms", "ttft_p90_ms", "tpot_p50_ms", "tpot_p90_ms")
    }
    order = np.argsort(ended_in[ok], kind="stable")
    groups = np.split(order, np.flatnonzero(np.diff(ended_in[ok][order])) + 1) if ok.any() else []
    ttft_ok, tpot_ok, where_ok = ttft_ms[ok], tpot_ms[ok], ended_in[ok]
    for group in groups:
        if not len(group):
            continue
        k = int(where_ok[group[0]])
        t = ttft_ok[group]
        t = t[np.isfinite(t)]
        if len(t):
            stats["ttft_p50_ms"][k], stats["ttft_p90_ms"][k] = _lower(t, 50), _lower(t, 90)
        s = tpot_ok[group]
        s = s[np.isfinite(s) & (s > 0)]
        if len(s):
            stats["tpot_p50_ms"][k], stats["tpot_p90_ms"][k] = _lower(s, 50), _lower(s, 90)
    return stats


def bin_requests(
    issued: Ints, first: Ints, done: Ints, tokens: Ints, after: Ints, failed: npt.NDArray[np.bool_]
) -> dict[str, Any]:
    start = int(issued.min())
    end = int(max(done.max(), issued.max()))
    span_s = max((end - start) / 1e9, 1e-9)
    width_s = max(1, math.ceil(span_s / MAX_BINS))
    n = max(1, math.ceil(span_s / width_s))
    width = width_s * 1_000_000_000
    edges = start + width * np.arange(n + 1, dtype=np.int64)

    def binned(at: Ints, mask: npt.NDArray[np.bool_] | None = None) -> Ints:
        where = (at - start) // width
        if mask is not None:
            where = where[mask]
        return np.bincount(np.clip(where, 0, n - 1), minlength=n).astype(np.int64)

    issued_per = binned(issued)
    done_per = binned(done, ~failed)
    failed_per = binned(done, failed)
    in_flight = np.searchsorted(np.sort(issued), edges[1:], side="right") - np.searchsorted(
        np.sort(done), edges[1:], side="right"
    )

    # Tokens: the first chunk's at its arrival, the rest spread over the streaming time.
    has_first = (first >= 0) & ~failed
    streaming = has_first & (done > first) & (after > 0)
    output_tps = _tokens_per_bin(first, done, tokens, after, has_first, streaming, edges) / width_s
    # Latency percentiles of the responses that ended in each bin.
    ttft_ms = np.where(first >= 0, (first - issued) / 1e6, np.nan)
    tpot_ms = np.where(streaming, (done - first) / np.maximum(after, 1) / 1e6, np.nan)
    ended_in = np.clip((done - start) // width, 0, n - 1)
    stats = _latency_per_bin(ttft_ms, tpot_ms, ended_in, ~failed, n)
    return {
        "bin_s": width_s,
        "start_ns": start,
        "t_s": [i * width_s for i in range(n)],
        "issued": issued_per.tolist(),
        "completed": done_per.tolist(),
        "failed": failed_per.tolist(),
        "in_flight": in_flight.astype(np.int64).tolist(),
        "output_tps": _rounded(output_tps, 2),
        **{k: _rounded(v, 3) for k, v in stats.items()},
        "last_issue_s": round((int(issued.max()) - start) / 1e9, 3),
        "end_s": round((end - start) / 1e9, 3),
        "requests": int(len(issued)),
    }
