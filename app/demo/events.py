"""Run events for a demo point that the portal's re-count agrees with.

The demo's results are made up, but goodput is computed from per-request records, which only
a re-count of a point's ``events.jsonl`` stores. So one point of each demo curve carries
events whose requests give back its summary: the same number of completed requests, the
same output tokens in total, and TTFT and TPOT P90 equal to the summary's under the
official ``lower`` percentile. Requests run back to back on ``concurrency`` streams
(conversations of several turns on agentic points), spread over the summary's duration.

Each output is a run of random letters and the demo tokenizer counts one token per
character (``app/demo/tokenizer.py``), which keeps the files small: about 15 MB of events for
a gpt-oss point of 6,700 requests × 1,800 tokens, gzip-compressed in the bundle.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import orjson

from harness.metrics import events as ev
from harness.metrics.definitions import percentile_lower
from harness.metrics.timings import Timings

# Spreads (log-normal σ) that give the demo summary's percentile ratios: TTFT P50 ≈ 0.68 ×
# P90, TPOT P50 ≈ 0.82 × P90, output length P90 ≈ 1.4 × the mean.
TTFT_SIGMA = 0.30
TPOT_SIGMA = 0.15
LENGTH_SIGMA = 0.30
_LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


@dataclass(frozen=True)
class DemoRun:
    """What the point's summary says, which its events must give back."""

    requests: int
    concurrency: int
    output_tokens: int  # in total; every request gets at least two
    ttft_p90_ns: float
    tpot_p90_ns: float
    duration_ns: float
    truncated: int = 0  # requests that end with finish_reason "length"
    turns: int = 1  # > 1: agentic conversations of this many turns
    seed: int = 0


def _spread(rng: np.random.Generator, sigma: float, n: int, p90: float) -> npt.NDArray[np.float64]:
    """*n* log-normal values scaled so that their ``lower`` P90 is exactly *p90*."""
    draws = rng.lognormal(0.0, sigma, n)
    at_p90 = percentile_lower(np.sort(draws).tolist(), 90.0)
    return np.asarray(draws * (p90 / at_p90), dtype=np.float64)


def output_lengths(rng: np.random.Generator, n: int, total: int) -> npt.NDArray[np.int64]:
    """*n* lengths of at least 2 tokens (a first chunk and a rest) that sum to *total*."""
    if total < 2 * n:
        raise ValueError(f"{total} tokens cannot give {n} requests two tokens each")
    share = rng.lognormal(0.0, LENGTH_SIGMA, n)
    extra = share / share.sum() * (total - 2 * n)
    lengths = np.floor(extra).astype(np.int64)
    short = total - 2 * n - int(lengths.sum())
    lengths[np.argsort(extra - lengths)[::-1][:short]] += 1  # the largest remainders
    return np.asarray(lengths + 2, dtype=np.int64)


def write_events(path: Path, run: DemoRun) -> Timings:
    """Write the point's events (gzip-compressed when *path* ends in ``.gz``); the requests'
    timings come back, for the point's steady-state block."""
    rng = np.random.default_rng(run.seed)
    n = run.requests
    lengths = output_lengths(rng, n, run.output_tokens)
    ttft = np.maximum(np.rint(_spread(rng, TTFT_SIGMA, n, run.ttft_p90_ns)), 1).astype(np.int64)
    tpot = _spread(rng, TPOT_SIGMA, n, run.tpot_p90_ns)
    # TPOT is (complete − first chunk) / the tokens after the first chunk (one token).
    streaming = np.maximum(np.rint(tpot * (lengths - 1)), 1).astype(np.int64)
    latency = ttft + streaming
    stream = np.arange(n) % run.concurrency
    busy = np.bincount(stream, weights=latency, minlength=run.concurrency)
    on_stream = np.bincount(stream, minlength=run.concurrency)
    # The slack left on each stream over the run's duration becomes the pause between its
    # requests (tool time on agentic turns); a busier stream runs back to back.
    pause = np.maximum(run.duration_ns - busy, 0) / np.maximum(on_stream, 1)
    longest = np.argsort(lengths)[::-1][: run.truncated]
    truncated = np.zeros(n, dtype=bool)
    truncated[longest] = True
    letters = _LETTERS[rng.integers(0, len(_LETTERS), int(lengths.max()) * 4)].tobytes().decode()
    offsets = rng.integers(0, len(letters) - lengths.max(), n)

    start_ns = 1_000_000_000
    clock = np.full(run.concurrency, start_ns, dtype=np.float64) + np.arange(run.concurrency)
    issued = np.empty(n, dtype=np.int64)
    served = np.zeros(run.concurrency, dtype=np.int64)
    where: list[tuple[str, int | None]] = []
    for i in range(n):
        s = stream[i]
        issued[i] = int(clock[s])
        clock[s] += latency[i] + pause[s] + 1  # the next request starts after this one ends
        if run.turns > 1:
            where.append((f"demo-{s}-{served[s] // run.turns}", int(served[s] % run.turns) + 1))
        else:
            where.append(("", None))
        served[s] += 1
    first = issued + ttft
    complete = first + streaming

    # (time, order within the same nanosecond, kind, request); sorted, that is the log.
    timeline = [(int(issued[i]), 0, ev.ISSUED, i) for i in range(n)]
    timeline += [(int(first[i]), 1, ev.RECV_FIRST, i) for i in range(n)]
    timeline += [(int(complete[i]), 2, ev.COMPLETE, i) for i in range(n)]
    timeline.sort()
    last_issue = int(issued.max())
    lines = [
        ev.event_line(ev.SESSION_STARTED, start_ns - 2),
        ev.event_line(ev.START_TRACKING, start_ns - 1),
    ]
    stopped = False
    for ts, _order, kind, i in timeline:
        if not stopped and ts > last_issue:
            lines.append(ev.event_line(ev.STOP_TRACKING, last_issue + 1))
            stopped = True
        conversation, turn = where[i]
        record: dict[str, object] = {
            "event_type": kind,
            "timestamp_ns": ts,
            "sample_uuid": f"{run.seed:08x}{i:024x}",
            "conversation_id": conversation,
            "turn": turn,
            "data": None,
        }
        if kind == ev.COMPLETE:
            offset = int(offsets[i])
            text = letters[offset : offset + int(lengths[i])]
            record["data"] = ["TextModelOutput", [text[0], text[1:]], None, None]
            record["finish_reason"] = "length" if truncated[i] else "stop"
        lines.append(orjson.dumps(record) + b"\n")
    if not stopped:
        lines.append(ev.event_line(ev.STOP_TRACKING, last_issue + 1))
    lines.append(ev.event_line(ev.SESSION_ENDED, int(complete.max()) + 1))
    data = b"".join(lines)  # a demo point's events: a few MB
    path.write_bytes(gzip.compress(data, compresslevel=1) if path.suffix == ".gz" else data)
    return Timings(issued, first, complete, lengths, lengths - 1, np.zeros(n, dtype=bool))


__all__ = ["DemoRun", "output_lengths", "write_events"]
