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
  A request with a single output token streams nothing after the first one: only its TTFT
  judges it. For agentic benchmarks the rate is the turn's output tokens over its latency,
  the per-turn counterpart of ``e2e_avg_interactivity``.
- A request **meets the SLO** when it did not fail, produced output, its TTFT is at most
  the limit and its output rate at least the minimum (a limit not given is not applied).
- ``slo_attainment`` is the share of the point's tracked requests (completed or failed)
  that met it; failed requests count as missing it.
- ``goodput_tps`` is the output tokens of the requests that met it over the point's
  duration (its reported window), in tokens per second.
"""

from __future__ import annotations

import math
import struct
import zlib
from array import array
from dataclasses import dataclass

_MAGIC = b"RQL1"
_HEADER = struct.Struct("<4sI")


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
        decode = math.inf  # nothing streamed after the first token
    elif streaming_s > 0:
        decode = after / streaming_s
    else:
        decode = math.inf  # every token arrived with the first chunk
    e2e = output_tokens / latency_s if latency_s > 0 else (math.inf if output_tokens else 0.0)
    return Request(ttft_s * 1000, decode, e2e, output_tokens, failed)


@dataclass(frozen=True)
class Goodput:
    requests: int
    met: int
    tokens_met: int
    duration_s: float

    @property
    def slo_attainment(self) -> float | None:
        return self.met / self.requests if self.requests else None

    @property
    def goodput_tps(self) -> float | None:
        return self.tokens_met / self.duration_s if self.duration_s > 0 else None


class RequestLog:
    """Every tracked request of a point, packed in columns (29 bytes a request before
    compression: doubles, so a limit compares exactly as the events measured)."""

    def __init__(self, requests: list[Request] | None = None) -> None:
        self.ttft_ms = array("d")
        self.decode_rate = array("d")
        self.e2e_rate = array("d")
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
        if magic != _MAGIC:
            raise ValueError("not a request log")
        body = zlib.decompress(data[_HEADER.size :])
        log = cls()
        offset = 0
        for column in (log.ttft_ms, log.decode_rate, log.e2e_rate, log.output_tokens, log.failed):
            size = n * column.itemsize
            column.frombytes(body[offset : offset + size])
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
        rates = self.e2e_rate if agentic else self.decode_rate
        ttft_limit = math.inf if ttft_max_ms is None else ttft_max_ms
        rate_floor = -math.inf if rate_min is None else rate_min
        met = tokens = 0
        for ttft, rate, n, failed in zip(
            self.ttft_ms, rates, self.output_tokens, self.failed, strict=True
        ):
            if not failed and n > 0 and ttft <= ttft_limit and rate >= rate_floor:
                met += 1
                tokens += n
        return Goodput(len(self), met, tokens, duration_s)
