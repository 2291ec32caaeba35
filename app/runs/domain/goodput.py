"""Goodput: how many of a point's requests met the buyer's SLA, from the submitted events.

A point's P90s say how the slowest tenth fared, not how many requests a buyer's SLO would
have kept. The re-count of a point's ``events.jsonl`` leaves a compact record of every
tracked request (:class:`RequestLog`), from which any SLA is answered later without
reading the events again.

Definitions (written in the README too):

- A request's **TTFT** is the time from its issue to its first non-empty chunk (the
  harness's first-chunk event, as the official client measures it). A request that
  streamed no chunk before it completed has its whole latency as TTFT.
- A request's **output rate** is its tokens after the first over the time from its first
  chunk to its completion: the per-request counterpart of ``tps_per_user = 1000 / TPOT``.
  A response that streamed nothing after its first chunk (one chunk, or one token) has no
  output rate: it misses any minimum rate, and only an SLA without one can keep it. For
  agentic benchmarks the rate is the turn's output tokens over its latency,
  the per-turn counterpart of ``e2e_avg_interactivity``.
- A request **meets the SLO** when it did not fail, produced output, its TTFT is at most
  the limit and its output rate at least the minimum (a limit not given is not applied).
- Goodput covers the point's **official reporting window** (rules §2.3): the steady-state
  window's requests over its issue-time span when the point is windowable, else every
  tracked request over the point's reported duration (``total``); each figure says which.
- ``slo_attainment`` is the share of the window's tracked requests (completed, failed, or
  issued and never completed) that met it; failed and unfinished requests miss it.
- ``goodput_tps`` is the output tokens of the requests that met it over the window's
  duration, in tokens per second.

The record keeps TTFT and rates as 32-bit floats (seven significant digits: 0.1 µs on a
one-second TTFT), and every limit is compared with exactly what the record holds.

Many points are answered at once by :class:`GoodputIndex`, which needs no pass over every
request: each point's requests are sorted by TTFT into rows of :data:`ROW`, and each row
by rate. Rows whose TTFT is all within the limit need one binary search for the rate;
only one row a point (the one the TTFT limit cuts) is read request by request.
"""

from __future__ import annotations

import math
import struct
import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

_MAGIC = b"RQL2"  # 32-bit TTFT and rates
_MAGIC_DOUBLES = b"RQL1"  # the first records, with doubles: read, rounded as RQL2 keeps them
_HEADER = struct.Struct("<4sI")
# A response that streamed nothing after its first chunk has no per-user rate: it meets
# no minimum rate (and any SLA without one).
NO_RATE = -math.inf
ROW = 256  # requests in an index row: one row a point is read request by request
BLOCK = 16  # float32 rates in a 64-byte cache line


@dataclass(frozen=True)
class Request:
    """One tracked request as goodput reads it."""

    ttft_ms: float
    decode_rate: float  # tokens/s after the first token; inf with a single token
    e2e_rate: float  # output tokens / latency, tokens/s
    output_tokens: int
    failed: bool


def request_of(
    ttft_ns: int | None,
    latency_ns: int | None,
    output_tokens: int,
    tokens_after_first: int | None,
    failed: bool,
) -> Request:
    """A request from what the summary saw of it (nanoseconds, token counts)."""
    latency_s = (latency_ns or 0) / 1e9
    ttft_s = latency_s if ttft_ns is None else ttft_ns / 1e9
    after = tokens_after_first or 0
    streaming_s = latency_s - ttft_s
    if after <= 0:
        decode = NO_RATE  # nothing streamed after the first chunk: no per-user rate
    elif streaming_s > 0:
        decode = after / streaming_s
    else:
        decode = math.inf  # every token arrived with the first chunk
    e2e = output_tokens / latency_s if latency_s > 0 else (math.inf if output_tokens else 0.0)
    return Request(ttft_s * 1000, decode, e2e, output_tokens, failed)


def in_window(log: RequestLog, issued_ns: Sequence[int], first_ns: int, last_ns: int) -> RequestLog:
    """The requests of *log* issued from *first_ns* to *last_ns* (*issued_ns*: each
    request's issue time, in the log's order)."""
    issued = np.asarray(issued_ns, dtype=np.int64)
    keep = (issued >= first_ns) & (issued <= last_ns)
    kept = RequestLog()
    for name in ("ttft_ms", "decode_rate", "e2e_rate", "output_tokens", "failed"):
        column = getattr(log, name)
        values = np.frombuffer(column, dtype=np.dtype(column.typecode))
        getattr(kept, name).frombytes(values[keep].tobytes())
    return kept


Counts = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def slo_rates(
    met: Counts, tokens: Counts, requests: Counts, duration_s: Floats
) -> tuple[Floats, Floats]:
    """Per point, ``slo_attainment`` (met over tracked requests; NaN for a point with
    none) and ``goodput_tps`` (tokens of the requests that met the SLO over the point's
    duration; NaN without a duration)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        attainment = np.where(requests > 0, met / requests, np.nan)
        goodput = np.where(duration_s > 0, tokens / duration_s, np.nan)
    return attainment, goodput


@dataclass(frozen=True)
class Goodput:
    """One point's goodput (:meth:`RequestLog.goodput`)."""

    requests: int
    met: int
    tokens_met: int
    duration_s: float

    def _rates(self) -> tuple[float | None, float | None]:
        attainment, goodput = slo_rates(
            np.array([self.met]),
            np.array([self.tokens_met]),
            np.array([self.requests]),
            np.array([self.duration_s]),
        )
        return (
            None if np.isnan(attainment[0]) else float(attainment[0]),
            None if np.isnan(goodput[0]) else float(goodput[0]),
        )

    @property
    def slo_attainment(self) -> float | None:
        return self._rates()[0]

    @property
    def goodput_tps(self) -> float | None:
        return self._rates()[1]


class RequestLog:
    """Every tracked request of a point, packed in columns (17 bytes a request before
    compression)."""

    def __init__(self, requests: list[Request] | None = None) -> None:
        self.ttft_ms = array("f")
        self.decode_rate = array("f")
        self.e2e_rate = array("f")
        self.output_tokens = array("I")
        self.failed = array("B")
        for request in requests or []:
            self.add(request)

    def add(self, r: Request) -> None:
        self.ttft_ms.append(r.ttft_ms)
        self.decode_rate.append(r.decode_rate)
        self.e2e_rate.append(r.e2e_rate)
        self.output_tokens.append(r.output_tokens)
        self.failed.append(1 if r.failed else 0)

    def __len__(self) -> int:
        return len(self.failed)

    def to_bytes(self) -> bytes:
        columns = (self.ttft_ms, self.decode_rate, self.e2e_rate, self.output_tokens, self.failed)
        body = b"".join(c.tobytes() for c in columns)
        return _HEADER.pack(_MAGIC, len(self)) + zlib.compress(body, 6)

    @classmethod
    def from_bytes(cls, data: bytes) -> RequestLog:
        magic, n = _HEADER.unpack_from(data)
        if magic not in (_MAGIC, _MAGIC_DOUBLES):
            raise ValueError("not a request log")
        body = zlib.decompress(data[_HEADER.size :])
        real = "f" if magic == _MAGIC else "d"
        log = cls()
        offset = 0
        for column, code in (
            (log.ttft_ms, real),
            (log.decode_rate, real),
            (log.e2e_rate, real),
            (log.output_tokens, "I"),
            (log.failed, "B"),
        ):
            read = array(code)
            size = n * read.itemsize
            read.frombytes(body[offset : offset + size])
            if len(read) != n:
                raise ValueError("a request log of the wrong length")
            if code == column.typecode:
                column.extend(read)
            else:
                column.extend(array(column.typecode, read.tolist()))  # rounded
            offset += size
        if offset != len(body):
            raise ValueError("a request log of the wrong length")
        return log

    def goodput(
        self,
        ttft_max_ms: float | None,
        rate_min: float | None,
        duration_s: float,
        *,
        agentic: bool = False,
    ) -> Goodput:
        """The requests that met the SLO, per the definitions above."""
        met, tokens = GoodputIndex([self], [agentic]).met(ttft_max_ms, rate_min)
        return Goodput(len(self), int(met[0]), int(tokens[0]), duration_s)


class GoodputIndex:
    """Many points' request logs arranged so that any SLA is answered for all of them
    in a few array operations (see the module's text); *agentic* says, per log, which
    rate its SLA reads.

    Each point's live requests are sorted by TTFT and cut into rows of :data:`ROW`
    slots (the last one padded with NaN, which meets no limit); each row is then sorted
    by rate and keeps, per slot, the tokens of the slots from it to the row's end.
    Twelve bytes a request.
    """

    def __init__(self, logs: Sequence[RequestLog], agentic: Sequence[bool]) -> None:
        self.points = len(logs)
        self.requests = np.array([len(log) for log in logs], dtype=np.int64)
        columns = []
        for log, e2e in zip(logs, agentic, strict=True):
            ttft = np.frombuffer(log.ttft_ms, dtype=np.float32)
            rate = np.frombuffer(log.e2e_rate if e2e else log.decode_rate, dtype=np.float32)
            n_tokens = np.frombuffer(log.output_tokens, dtype=np.uint32)
            failed = np.frombuffer(log.failed, dtype=np.uint8)
            # A failed request, one with no output or a value that is not a number never
            # meets an SLO: it stays out of the index and counts only in the total.
            live = (failed == 0) & (n_tokens > 0) & ~np.isnan(ttft) & ~np.isnan(rate)
            ttft, rate, n_tokens = ttft[live], rate[live], n_tokens[live]
            if len(ttft) > 1 and not (ttft[1:] >= ttft[:-1]).all():  # stored records are sorted
                order = np.argsort(ttft, kind="stable")
                ttft, rate, n_tokens = ttft[order], rate[order], n_tokens[order]
            columns.append((ttft, rate, n_tokens))
        rows = np.array([-(-len(t) // ROW) for t, _r, _n in columns], dtype=np.int64)
        self.point_rows = np.concatenate(([0], np.cumsum(rows))).astype(np.int64)
        total = int(self.point_rows[-1])
        ttft2 = np.full((total, ROW), np.nan, dtype=np.float32)
        rate2 = np.full((total, ROW), np.nan, dtype=np.float32)
        tokens2 = np.zeros((total, ROW), dtype=np.int64)
        flat_t, flat_r, flat_n = ttft2.reshape(-1), rate2.reshape(-1), tokens2.reshape(-1)
        for (ttft, rate, n_tokens), first in zip(columns, self.point_rows[:-1], strict=True):
            at = int(first) * ROW
            flat_t[at : at + len(ttft)] = ttft
            flat_r[at : at + len(ttft)] = rate
            flat_n[at : at + len(ttft)] = n_tokens
        # Rows are in TTFT order, so a row's largest TTFT is its last real one.
        self.row_max = np.nanmax(ttft2, axis=1, initial=-np.inf) if total else ttft2[:, 0]
        self.padding = np.isnan(ttft2).sum(axis=1).astype(np.int64)
        by_rate = np.argsort(rate2, axis=1)  # NaN padding sorts last
        self.ttft = np.take_along_axis(ttft2, by_rate, axis=1)
        self.rate = np.take_along_axis(rate2, by_rate, axis=1)
        suffix = np.cumsum(np.take_along_axis(tokens2, by_rate, axis=1)[:, ::-1], axis=1)[:, ::-1]
        small = not suffix.size or suffix.max() < 2**32
        self.suffix = suffix.astype(np.uint32) if small else suffix
        self.block_last = np.ascontiguousarray(self.rate[:, BLOCK - 1 :: BLOCK])
        self.row_point = np.repeat(np.arange(self.points), rows)

    def met(self, ttft_max_ms: float | None, rate_min: float | None) -> tuple[Counts, Counts]:
        """Per log, the requests that met the SLO and their output tokens."""
        limit = _float32_at_most(math.inf if ttft_max_ms is None else ttft_max_ms)
        floor = _float32_at_least(-math.inf if rate_min is None else rate_min)
        met = np.zeros(self.points, dtype=np.int64)
        tokens = np.zeros(self.points, dtype=np.int64)
        # Rows with every TTFT within the limit: in each, count the rates under the floor
        # (rates ascend, NaN padding last and never under): first over the last rate of
        # each block of 16 (one cache line), then within the block the floor falls in.
        full = np.flatnonzero(self.row_max <= limit)
        per_row = ROW // BLOCK
        blocks = _count(np.take(self.block_last, full, axis=0) < floor)
        block = np.minimum(blocks, per_row - 1)
        within = np.take(self.rate.reshape(-1, BLOCK), full * per_row + block, axis=0)
        under = np.where(blocks < per_row, blocks * BLOCK + _count(within < floor), ROW)
        count = ROW - self.padding[full] - under
        suffix = self.suffix.reshape(-1)
        good = np.where(under < ROW, suffix[full * ROW + np.minimum(under, ROW - 1)], 0)
        owner = self.row_point[full]
        met += np.bincount(owner, weights=count, minlength=self.points).astype(np.int64)
        tokens += np.bincount(owner, weights=good, minlength=self.points).astype(np.int64)
        # The one row a point that the limit cuts: read request by request.
        cut = self.point_rows[:-1] + np.bincount(owner, minlength=self.points)
        has_cut = cut < self.point_rows[1:]
        cut = cut[has_cut]
        if len(cut):
            ok = (np.take(self.ttft, cut, axis=0) <= limit) & (
                np.take(self.rate, cut, axis=0) >= floor
            )  # NaN padding: never
            after = np.take(self.suffix, cut, axis=0)
            each = after - np.pad(after[:, 1:], ((0, 0), (0, 1)))
            met[has_cut] += _count(ok)
            tokens[has_cut] += (each * ok).sum(axis=1, dtype=np.int64)
        return met, tokens


def _count(flags: npt.NDArray[np.bool_]) -> Counts:
    """The True flags in each row."""
    counts: Counts = flags.sum(axis=1, dtype=np.int64)
    return counts


# The columns are float32: a limit becomes the float32 that makes the same comparison
# exactly (the largest at most a maximum, the smallest at least a minimum), so the
# arrays are compared as they are, without being widened.
def _float32_at_most(value: float) -> np.float32:
    with np.errstate(over="ignore"):
        near = np.float32(value)
    if float(near) > value:  # compared as doubles, not the limit rounded
        near = np.nextafter(near, np.float32(-np.inf))
    return near


def _float32_at_least(value: float) -> np.float32:
    with np.errstate(over="ignore"):
        near = np.float32(value)
    if float(near) < value:
        near = np.nextafter(near, np.float32(np.inf))
    return near
