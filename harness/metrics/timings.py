"""Each tracked request's timings, collected once while the summary reads the events.

The time series (``timeseries.py``) and the steady-state analysis (``steady_state.py``)
are both computed from these arrays, so neither reads ``events.jsonl`` a second time and
both agree with the summary's counts. 41 bytes a request.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from harness.metrics.summary import Completed

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Timings:
    """Per tracked request, in the order the summary saw them complete: issue, first chunk
    (−1: none), completion, on the run's clock in ns; output tokens, tokens after the first
    chunk; whether it failed. ``unfinished``: the issue times of the tracked requests that
    never completed (they keep their place in the issue order and measure nothing)."""

    issued: Ints
    first: Ints
    done: Ints
    tokens: Ints
    after: Ints
    failed: npt.NDArray[np.bool_]
    unfinished: Ints = field(default_factory=lambda: np.zeros(0, np.int64))


class RequestTimings:
    """An observer for :func:`harness.metrics.summary.summarize`."""

    def __init__(self) -> None:
        self._issued = array("q")
        self._first = array("q")
        self._done = array("q")
        self._tokens = array("q")
        self._after = array("q")
        self._failed = array("b")
        self._unfinished = array("q")

    def __call__(self, completed: Completed) -> None:
        if completed.issued_ns is None:
            return
        if completed.latency_ns is None:
            self._unfinished.append(completed.issued_ns)
            return
        self._issued.append(completed.issued_ns)
        ttft = completed.ttft_ns
        self._first.append(-1 if ttft is None else completed.issued_ns + ttft)
        self._done.append(completed.issued_ns + completed.latency_ns)
        self._tokens.append(completed.output_tokens)
        self._after.append(completed.tokens_after_first or 0)
        self._failed.append(1 if completed.failed else 0)

    def __len__(self) -> int:
        return len(self._issued)

    def timings(self) -> Timings:
        def ints(values: array[int]) -> Ints:
            return np.frombuffer(values, dtype=np.int64) if values else np.zeros(0, np.int64)

        return Timings(
            ints(self._issued),
            ints(self._first),
            ints(self._done),
            ints(self._tokens),
            ints(self._after),
            np.frombuffer(self._failed, dtype=np.int8).astype(bool)
            if self._failed
            else np.zeros(0, bool),
            ints(self._unfinished),
        )


def issue_span_s(t: Timings) -> float:
    """Seconds from the first tracked issue to the last (the never-completed included):
    the span §6.2's minimum is measured on, the drain after the last issue left out."""
    issued = np.concatenate([t.issued, t.unfinished])
    return float(issued.max() - issued.min()) / 1e9 if len(issued) else 0.0
