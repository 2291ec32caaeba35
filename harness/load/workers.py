"""One point driven by several processes (``--workers N``), as the official client scales.

Each worker process runs its own event loop and connections over a share of the load: the
concurrency split as evenly as it goes, or the target QPS divided by N (N independent
Poisson streams add up to one of the whole rate), or the Offline samples dealt out. Every
worker takes every N-th entry of the one seeded issue order, so the dataset is covered as
one process covers it.

The processes share one clock: ``time.monotonic_ns`` reads the system's CLOCK_MONOTONIC,
the same in every process of a machine. The parent writes the session events: the
tracking window opens once every worker has connected and finished its share of the
warm-up, and closes when the last worker has drained. Each worker writes its own events,
and the parent merges them with its own into one ``events.jsonl`` by timestamp, each
file's order kept, so the summary is computed exactly as for one process.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import multiprocessing
import queue
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from harness.load.dataset import Sample
from harness.load.engine import LoadSession, RunConfig, run_event_loop, sample_order
from harness.metrics import events as ev
from harness.metrics.events import EventWriter

# How long a worker may take to start (interpreter, imports, connections) and warm up.
START_TIMEOUT_S = 300.0


@dataclass
class WorkerStats:
    issued: int = 0
    finished: int = 0
    dropped: int = 0
    aborted: str | None = None
    index_map: dict[str, int] = field(default_factory=dict)


def shares(config: RunConfig, n_samples_total: int) -> list[RunConfig]:
    """Each worker's configuration: its part of the load, of the sample count and of the
    warm-up (workers with nothing to do are left out)."""
    n = max(config.workers, 1)
    if config.load_pattern == "concurrency":
        n = min(n, config.concurrency)
    out = []
    for k in range(n):

        def part(total: int | None, k: int = k) -> int | None:
            return None if total is None else total // n + (1 if k < total % n else 0)

        share = replace(
            config,
            workers=1,
            concurrency=part(config.concurrency) or 0
            if config.load_pattern == "concurrency"
            else config.concurrency,
            target_qps=None if config.target_qps is None else config.target_qps / n,
            n_samples=part(
                config.n_samples
                if config.n_samples is not None or config.load_pattern != "offline"
                else n_samples_total
            ),
            warmup_requests=part(config.warmup_requests) or 0,
            # Each worker's Poisson arrivals are its own stream; the sample order is shared.
            scheduler_seed=config.arrival_seed + k,
        )
        out.append(share)
    return out


def _strided(order: Iterator[int], k: int, n: int) -> Iterator[int]:
    return itertools.islice(order, k, None, n)


async def _work(
    k: int,
    n: int,
    config: RunConfig,
    samples: list[Sample],
    events: Path,
    messages: Any,
    go: Any,
) -> WorkerStats:
    writer = EventWriter(events)
    session = LoadSession(config, samples, writer)
    try:
        if config.warmup_requests:
            warm = _strided(sample_order(len(samples), config.seed + 1), k, n)
            await session.run_phase(config.warmup_requests, None, warm)
        messages.put(("ready", k, None))
        await asyncio.to_thread(go.wait)
        deadline = time.monotonic() + config.duration_s if config.duration_s else None
        order = _strided(sample_order(len(samples), config.seed), k, n)
        await session.run_phase(config.n_samples, deadline, order)
    finally:
        await session.close(None)
        writer.close()
    return WorkerStats(
        session.issued, session.finished, session.dropped, session.aborted, session.index_map
    )


def _worker(
    k: int,
    n: int,
    config: RunConfig,
    samples: list[Sample],
    events: Path,
    messages: Any,
    go: Any,
) -> None:
    try:
        stats = run_event_loop(_work(k, n, config, samples, events, messages, go))
    except BaseException as exc:  # the parent reports it; the run cannot be trusted
        messages.put(("failed", k, f"{type(exc).__name__}: {exc}"))
        return
    messages.put(("done", k, stats))


def _timestamp(line: bytes) -> int:
    return int(orjson.loads(line)["timestamp_ns"])


def _lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as fh:
        for line in fh:
            if line.strip():
                yield line


def merge_events(parent: list[tuple[int, bytes]], parts: list[Path], out: Path) -> None:
    """One ``events.jsonl`` from the parent's session events and the workers' files,
    by timestamp, each file's own order kept (ties: the parent's event first)."""
    streams: list[Iterator[tuple[int, int, bytes]]] = [
        ((ts, 0, line) for ts, line in parent),
        *(((_timestamp(line), 1, line) for line in _lines(path)) for path in parts),
    ]
    with out.open("wb", buffering=1024 * 1024) as fh:
        for _ts, _who, line in heapq.merge(*streams, key=lambda item: (item[0], item[1])):
            fh.write(line if line.endswith(b"\n") else line + b"\n")


def _session_line(kind: str, ts: int) -> tuple[int, bytes]:
    return ts, ev.event_line(kind, ts)


class WorkerFailed(RuntimeError):
    pass


def run_in_processes(config: RunConfig, samples: list[Sample], run_dir: Path) -> WorkerStats:
    """Drive the point with ``config.workers`` processes; writes ``run_dir/events.jsonl``."""
    parts = shares(config, len(samples))
    n = len(parts)
    context = multiprocessing.get_context("spawn")  # no inherited threads or event loops
    messages = context.Queue()
    go = context.Event()
    files = [run_dir / f"events.worker-{k}.jsonl" for k in range(n)]
    started = time.monotonic_ns()
    processes = [
        context.Process(
            target=_worker,
            args=(k, n, share, samples, files[k], messages, go),
            daemon=True,
        )
        for k, share in enumerate(parts)
    ]
    for process in processes:
        process.start()
    merged = WorkerStats()
    try:
        _await(messages, processes, "ready", n, START_TIMEOUT_S)
        tracking = time.monotonic_ns()
        go.set()
        limit = (config.duration_s or 0) + config.drain_timeout_s + config.request_timeout_s
        for stats in _await(messages, processes, "done", n, limit + START_TIMEOUT_S):
            merged.issued += stats.issued
            merged.finished += stats.finished
            merged.dropped += stats.dropped
            merged.index_map.update(stats.index_map)
            merged.aborted = merged.aborted or stats.aborted
        stopped = time.monotonic_ns()
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
    session = [
        _session_line(ev.SESSION_STARTED, started),
        _session_line(ev.START_TRACKING, tracking),
        _session_line(ev.STOP_TRACKING, stopped),
        _session_line(ev.SESSION_ENDED, stopped + 1),
    ]
    merge_events(session, files, run_dir / "events.jsonl")
    for path in files:
        path.unlink()
    return merged


def _await(
    messages: Any, processes: list[Any], kind: str, count: int, timeout_s: float
) -> list[WorkerStats]:
    """Wait for *count* messages of *kind*; a worker that failed or died stops the run."""
    got: list[WorkerStats] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count:
        try:
            what, k, payload = messages.get(timeout=1.0)
        except queue.Empty:
            dead = [p for p in processes if not p.is_alive() and p.exitcode not in (0, None)]
            if dead:
                raise WorkerFailed(
                    f"a worker process exited with code {dead[0].exitcode}"
                ) from None
            if time.monotonic() > deadline:
                raise WorkerFailed(
                    f"workers did not report '{kind}' in {timeout_s:.0f} s"
                ) from None
            continue
        if what == "failed":
            raise WorkerFailed(f"worker {k} failed: {payload}")
        if what == kind:
            got.append(payload)
    return got
