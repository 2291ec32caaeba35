"""From ``events.jsonl`` to ``result_summary.json``: the one implementation of the metrics.

A run writes its events and then calls :func:`summarize` on them, and ``recompute`` calls
the same function later, so the two always agree. Recomputation streams the file and
tokenizes each response as it goes: memory grows with the number of samples (one number
per series per sample), never with the text.

Where the official client is wrong, the default here is right and the report says so:
failed requests are failures, not completions (``failures_as_completions=True`` gives the
official arithmetic, for comparing with runs it produced).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.metrics import events as ev
from harness.metrics.definitions import rate, stat_block
from harness.metrics.events import Output, Prompt, read_events
from harness.metrics.tokens import TokenCounter

# Responses counted together: enough that encode_batch keeps every core busy, and at most
# so many characters that two batches (one counted, one read) keep memory flat.
TOKENIZE_BATCH = 1024
TOKENIZE_BATCH_CHARS = 8_000_000
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call", "other")
VERSION = "0.1.0"


@dataclass
class SummaryOptions:
    load_pattern: str = "concurrency"
    failures_as_completions: bool = False
    use_legacy_window_for_poisson: bool = True
    run_config: dict[str, Any] = field(default_factory=dict)
    git_sha: str | None = None
    count_input_tokens: bool = True


@dataclass(frozen=True)
class Completed:
    """One tracked response as the summary saw it, for callers that inspect responses."""

    sample_uuid: str
    line: int
    output: Output
    finish_reason: str | None
    output_tokens: int
    tokens_after_first: int | None
    failed: bool
    ttft_ns: int | None = None  # issue to the first non-empty chunk, if one came
    latency_ns: int | None = None  # issue to completion; None: issued, never completed
    issued_ns: int | None = None  # when it was issued, on the run's clock
    # The server's own count, where the event carries it (``usage``: an extension of the
    # official schema, which has no such key).
    server_tokens: int | None = None
    prompt: Prompt | None = None  # as its issue event recorded it


@dataclass
class _Row:
    issued_ns: int
    recv_first_ns: int | None = None
    failed: bool = False
    server_tokens: int | None = None
    prompt: Prompt | None = None


def server_tokens(event: dict[str, Any]) -> int | None:
    """``usage.completion_tokens`` of a complete event, as the harness records it."""
    usage = event.get("usage")
    count = usage.get("completion_tokens") if isinstance(usage, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


@dataclass
class Summary:
    result: dict[str, Any]
    snapshot: dict[str, Any]
    notes: list[str]
    problems: list[str]  # malformed lines and other trouble found while reading
    # Against the summary the run folder already had (recompute), one line per number.
    comparison: list[str] = field(default_factory=list)


class Counts(Protocol):
    """Token counts for the events of one file, by line: a live tokenizer, or counts made
    before (``harness/metrics/ranges.py``: a file counted in parts, by several processes)."""

    def outputs(
        self, lines: list[int], outputs: list[Output], with_tail: list[bool]
    ) -> list[tuple[int, int | None]]: ...

    def output(self, line: int, output: Output) -> int: ...

    def prompt(self, line: int, prompt: Prompt) -> int | None: ...


@dataclass(frozen=True)
class LiveCounts:
    counter: TokenCounter

    def outputs(
        self, lines: list[int], outputs: list[Output], with_tail: list[bool]
    ) -> list[tuple[int, int | None]]:
        return self.counter.count_outputs(outputs, with_tail)

    def output(self, line: int, output: Output) -> int:
        return self.counter.count_output(output)

    def prompt(self, line: int, prompt: Prompt) -> int | None:
        return self.counter.count_prompt(prompt)

    def prompts(self, prompts: list[Prompt]) -> list[int | None]:
        """ISL of many prompts: the plain-text ones in one batch."""
        counts: list[int | None] = [None] * len(prompts)
        plain = [i for i, p in enumerate(prompts) if p.token_ids is None and p.text is not None]
        texts = [prompts[i].text or "" for i in plain]
        for i, n in zip(plain, self.counter.count_texts(texts) if texts else [], strict=True):
            counts[i] = n
        batched = set(plain)
        for i, prompt in enumerate(prompts):
            if i not in batched:
                counts[i] = self.counter.count_prompt(prompt)
        return counts

    def batch(
        self, prompts: list[Prompt], outputs: list[Output], with_tail: list[bool]
    ) -> tuple[list[int | None], list[tuple[int, int | None]]]:
        """A background batch: its prompts' and its responses' counts."""
        return (
            self.prompts(prompts) if prompts else [],
            self.counter.count_outputs(outputs, with_tail) if outputs else [],
        )


def summarize(
    path: Path,
    counter: TokenCounter | Counts | None,
    options: SummaryOptions,
    *,
    observer: Callable[[Completed], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Summary:
    """Compute the summary; ``observer`` sees each tracked response with its counts, and
    ``progress(lines, bytes)`` is called as the file is read. *counter* is a tokenizer, or
    counts made before (:class:`Counts`)."""
    counts: Counts | None = (
        LiveCounts(counter.remembering()) if isinstance(counter, TokenCounter) else counter
    )
    # Live counting runs beside the reading: one batch is tokenized (encode_batch lets go of
    # the interpreter) while the next is read and parsed.
    with (
        ThreadPoolExecutor(1, "tokenize")
        if isinstance(counts, LiveCounts)
        else nullcontext() as pool
    ):
        tally = _Tally(options, counts, observer, pool)
        for line, event in read_events(path, strict=False, progress=progress):
            tally.read(line, event)
        tally.end()
    notes = tally.notes()
    return Summary(
        result=tally.result(notes), snapshot=tally.snapshot(), notes=notes, problems=tally.problems
    )


# A response waiting to be tokenized: uuid, line, output, finish reason, row, completion.
_Pending = tuple[str, int, Output, str | None, _Row, int]
# A batch sent to the background: its responses, and their prompts' and outputs' counts.
_InFlight = tuple[list[_Pending], Future[tuple[list[int | None], list[tuple[int, int | None]]]]]


@dataclass
class _Tally:
    """What :func:`summarize` counts as it reads the event log, one event at a time."""

    options: SummaryOptions
    counts: Counts | None
    observer: Callable[[Completed], None] | None
    background: ThreadPoolExecutor | None = None
    rows: dict[str, _Row] = field(default_factory=dict)
    tracking: bool = False
    started: bool = False
    block_start: int = 0
    block_last: int = 0
    duration_ns: int = 0
    issued: int = 0
    completed: int = 0
    failed: int = 0
    ttft: list[int] = field(default_factory=list)
    tpot: list[float] = field(default_factory=list)
    latency: list[int] = field(default_factory=list)
    isl: list[int] = field(default_factory=list)
    osl: list[int] = field(default_factory=list)
    finish: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FINISH_REASONS, 0))
    first_issue_ns: int | None = None
    latest_issue_completed: tuple[int, int] | None = None  # (issued_ns, complete_ns)
    problems: list[str] = field(default_factory=list)
    negative_tpot: int = 0
    turn_tokens: int = 0  # tracked, successful turns: Σ output tokens …
    turn_time_ns: int = 0  # … and Σ serving time (tool delays between turns are not in it)
    osl_full_run: list[int] = field(default_factory=list)  # every completed turn, all windows
    # Agentic turns issued after STOP: outside the tracked set, yet e2e interactivity is
    # over all completed turns of all trajectories (rules §1.1). uuid → [issued, failed].
    late_turns: dict[str, list[int]] = field(default_factory=dict)
    # Responses wait here to be tokenized together: encode_batch runs on all cores, and
    # the wait is bounded, so memory stays flat however large the file is.
    pending: list[_Pending] = field(default_factory=list)
    pending_chars: int = 0
    prompts: list[Prompt] = field(default_factory=list)  # their ISL counted in the batch too
    # The batches sent to the background, oldest first, with their counts to come: one
    # counting and the next queued behind it, so the tokenizer never waits while the
    # older one's results are taken. Results are taken in order (settle) before anything
    # else is observed, so every list and the observer see the responses in the order
    # they would without the background.
    in_flight: deque[_InFlight] = field(default_factory=deque)
    # Each series' stat block, computed once for the summary and its snapshot.
    blocks: dict[tuple[int, bool], dict[str, Any]] = field(default_factory=dict)
    agentic: bool = field(init=False)

    def __post_init__(self) -> None:
        self.agentic = self.options.load_pattern == "agentic_inference"

    def read(self, line: int, event: dict[str, Any]) -> None:
        if "_error" in event:
            self.problems.append(f"line {line}: {event['_error']}")
            return
        kind = event["event_type"]
        ts = event["timestamp_ns"]
        uuid = event.get("sample_uuid") or ""
        if kind == ev.START_TRACKING:
            if self.tracking:
                self.close_block()
            self.tracking = self.started = True
            self.block_start = self.block_last = ts
        elif kind == ev.STOP_TRACKING:
            self.tracking = False  # the window stays open until the last tracked completion
        elif kind == ev.ISSUED:
            self.on_issued(line, uuid, ts, event)
        elif kind == ev.ERROR:
            row = self.rows.get(uuid)
            if row is not None and not row.failed:
                row.failed = True
                self.failed += 1
            elif uuid in self.late_turns:
                self.late_turns[uuid][1] = 1
        elif kind == ev.RECV_FIRST:
            row = self.rows.get(uuid)
            if row is not None and row.recv_first_ns is None:
                row.recv_first_ns = ts
                self.ttft.append(ts - row.issued_ns)
        elif kind == ev.COMPLETE:
            self.on_complete(line, uuid, ts, event)

    def on_issued(self, line: int, uuid: str, ts: int, event: dict[str, Any]) -> None:
        if self.tracking:
            prompt = Prompt.from_data(event.get("data"))
            self.rows[uuid] = _Row(issued_ns=ts, prompt=prompt)
            self.issued += 1
            first = self.first_issue_ns
            self.first_issue_ns = ts if first is None else min(first, ts)
            if self.counts is not None and self.options.count_input_tokens:
                if self.background is not None:  # counted with the next batch
                    self.prompts.append(prompt)
                    return
                count = self.counts.prompt(line, prompt)
                if count is not None:
                    self.isl.append(count)
        elif self.agentic and self.started:
            self.late_turns[uuid] = [ts, 0]

    def on_complete(self, line: int, uuid: str, ts: int, event: dict[str, Any]) -> None:
        row = self.rows.pop(uuid, None)
        if row is None:
            self.on_late_turn(line, uuid, ts, event)
            return
        self.block_last = max(self.block_last, ts)
        if row.failed and not self.options.failures_as_completions:
            self.settle()
            self.observe(uuid, line, row, ts, Output(None), None, failed=True)
            return
        self.completed += 1
        self.latency.append(ts - row.issued_ns)
        latest = self.latest_issue_completed
        if latest is None or row.issued_ns > latest[0]:
            self.latest_issue_completed = (row.issued_ns, ts)
        reason = event.get("finish_reason")
        row.server_tokens = server_tokens(event)
        if reason is not None:
            self.finish[reason if reason in self.finish else "other"] += 1
        output = Output.from_data(event.get("data"))
        if output is None or self.counts is None:
            self.settle()
            self.observe(uuid, line, row, ts, output or Output(None), reason, failed=row.failed)
            return
        self.pending.append((uuid, line, output, reason, row, ts))
        self.pending_chars += len(output.content) + len(output.reasoning_text or "")
        if len(self.pending) >= TOKENIZE_BATCH or self.pending_chars >= TOKENIZE_BATCH_CHARS:
            self.flush()

    def on_late_turn(self, line: int, uuid: str, ts: int, event: dict[str, Any]) -> None:
        """An agentic turn completed outside the tracked window: it still counts toward
        the trajectories' interactivity."""
        if not self.agentic or self.counts is None:
            return
        self.settle()
        late = Output.from_data(event.get("data"))
        turn = self.late_turns.pop(uuid, None)
        if late is not None:
            n_late = self.counts.output(line, late)
            self.osl_full_run.append(n_late)
            if turn is not None and not turn[1]:
                self.turn_tokens += n_late
                self.turn_time_ns += ts - turn[0]

    def observe(
        self,
        uuid: str,
        line: int,
        row: _Row,
        ts: int,
        output: Output,
        reason: str | None,
        *,
        failed: bool,
        counted: tuple[int, int | None] = (0, None),
        server_tokens: int | None = None,
    ) -> None:
        if self.observer is None:
            return
        first = row.recv_first_ns
        self.observer(
            Completed(uuid, line, output, reason, counted[0], counted[1], failed,
                      ttft_ns=None if first is None else first - row.issued_ns,
                      latency_ns=ts - row.issued_ns, issued_ns=row.issued_ns,
                      server_tokens=server_tokens, prompt=row.prompt)
        )  # fmt: skip

    def flush(self) -> None:
        """Count the waiting responses (and prompts): in the background where there is one,
        after taking the batch before it, else here."""
        pending, prompts = self.pending, self.prompts
        if not pending and not prompts:
            return
        assert self.counts is not None
        self.pending, self.prompts, self.pending_chars = [], [], 0
        lines = [item[1] for item in pending]
        outputs = [item[2] for item in pending]
        with_tail = [item[4].recv_first_ns is not None for item in pending]
        if self.background is None:
            self.take(pending, self.counts.outputs(lines, outputs, with_tail))
            return
        assert isinstance(self.counts, LiveCounts)
        counted = self.background.submit(self.counts.batch, prompts, outputs, with_tail)
        self.in_flight.append((pending, counted))
        while len(self.in_flight) > 2:  # memory stays bounded: two batches at most
            self.take_oldest()

    def settle(self) -> None:
        """Take the counts of every batch in the background, in the order sent."""
        while self.in_flight:
            self.take_oldest()

    def take_oldest(self) -> None:
        pending, counted = self.in_flight.popleft()
        isl, outputs = counted.result()
        self.isl.extend(n for n in isl if n is not None)
        self.take(pending, outputs)

    def take(self, pending: list[_Pending], counted: list[tuple[int, int | None]]) -> None:
        for (uuid, line, output, reason, row, ts), (n_out, n_after) in zip(
            pending, counted, strict=True
        ):
            if output.content or output.reasoning_text or output.tool_calls:
                self.osl.append(n_out)
                self.osl_full_run.append(n_out)
            if self.agentic and not row.failed:
                self.turn_tokens += n_out
                self.turn_time_ns += ts - row.issued_ns
            if n_after is not None and n_after > 0 and row.recv_first_ns is not None:
                value = (ts - row.recv_first_ns) / n_after
                self.negative_tpot += value < 0
                self.tpot.append(value)
            self.observe(uuid, line, row, ts, output, reason, failed=row.failed,
                         counted=(n_out, n_after), server_tokens=row.server_tokens)  # fmt: skip

    def block(self, values: list[Any], integer: bool = False) -> dict[str, Any]:
        """*values*' stat block, once (the summary and its snapshot both show it)."""
        key = (id(values), integer)
        found = self.blocks.get(key)
        if found is None:
            found = self.blocks[key] = stat_block(values, integer=integer)
        return found

    def close_block(self) -> None:
        if self.block_last > self.block_start:
            self.duration_ns += self.block_last - self.block_start

    def end(self) -> None:
        self.flush()
        self.settle()
        if self.tracking or self.block_last > self.block_start:
            self.close_block()
        if self.observer is not None:
            # Issued in the window, never completed nor failed: they keep their place in
            # the issue order (steady state) and miss every SLO (goodput).
            for uuid, row in sorted(self.rows.items(), key=lambda item: item[1].issued_ns):
                self.observer(
                    Completed(uuid, 0, Output(None), None, 0, None, True,
                              issued_ns=row.issued_ns, prompt=row.prompt)
                )  # fmt: skip

    @property
    def dropped(self) -> int:
        return len(self.rows)  # issued in the window, never completed nor failed

    def notes(self) -> list[str]:
        notes: list[str] = []
        if not self.options.failures_as_completions:
            notes.append(
                "failed requests are counted as failures, not completions "
                "(the official client counts them as completed)"
            )
        if self.dropped:
            notes.append(
                f"{self.dropped} request(s) issued in the window never finished and are excluded"
            )
        if self.negative_tpot:
            notes.append(
                f"{self.negative_tpot} negative TPOT value(s) kept, as the official client does"
            )
        if self.counts is None:
            notes.append("no reference tokenizer: token counts, TPOT and TPS are empty")
        return notes

    def legacy_window_ns(self) -> int | None:
        """The older loadgen's window for Poisson runs (first issue to the completion of
        the latest-issued request), where the options ask for it and it is defined."""
        latest, first = self.latest_issue_completed, self.first_issue_ns
        legacy_ns = None if latest is None or first is None else latest[1] - first
        use_legacy = (
            self.options.load_pattern == "poisson"
            and self.options.use_legacy_window_for_poisson
            and legacy_ns is not None
            and legacy_ns > 0
            and self.completed >= 2
        )
        return legacy_ns if use_legacy else None

    def result(self, notes: list[str]) -> dict[str, Any]:
        options, completed = self.options, self.completed
        legacy_ns = self.legacy_window_ns()
        osl_total = sum(self.osl) if self.osl else None
        if legacy_ns is not None:
            qps = rate(completed - 1, legacy_ns)
            tps = rate(osl_total, legacy_ns) if osl_total is not None else None
        else:
            qps = rate(completed, self.duration_ns)
            tps = rate(osl_total, self.duration_ns) if osl_total is not None else None
        return {
            "version": VERSION,
            "git_sha": options.git_sha,
            "test_started_at": 0,
            "n_samples_issued": self.issued,
            "n_samples_completed": completed,
            "n_samples_failed": self.failed,
            "n_samples_succeeded": completed
            if options.failures_as_completions is False
            else completed - self.failed,
            "n_samples_dropped": self.dropped,
            "duration_ns": self.duration_ns or None,
            "state": "complete",
            "complete": True,
            "ttft": self.block(self.ttft, integer=True),
            "tpot": self.block(self.tpot),
            "latency": self.block(self.latency, integer=True),
            "output_sequence_lengths": self.block(self.osl, integer=True),
            "input_sequence_lengths": self.block(self.isl, integer=True),
            "legacy_loadgen_window_duration_ns": legacy_ns,
            "qps": qps,
            "tps": tps,
            "finish_reason_counts": self.finish,
            "run_config": options.run_config,
            **self.agentic_fields(),
            "harness": {"failures_as_completions": options.failures_as_completions, "notes": notes},
        }

    def agentic_fields(self) -> dict[str, Any]:
        if not self.agentic or self.counts is None:
            return {}
        return {
            "output_tokens_per_turn_total": float(self.turn_tokens),
            "e2e_turn_time_seconds_total": self.turn_time_ns / 1e9,
            "e2e_avg_interactivity": rate(self.turn_tokens, self.turn_time_ns),
            "output_sequence_lengths_full_run": {
                "output_sequence_lengths": stat_block(self.osl_full_run, integer=True)
            },
        }

    def snapshot(self) -> dict[str, Any]:
        latest, first = self.latest_issue_completed, self.first_issue_ns
        legacy_ns = None if latest is None or first is None else latest[1] - first
        return {
            "state": "complete",
            "n_pending_tasks": 0,
            "metrics": [
                {"type": "counter", "name": "tracked_samples_issued", "value": self.issued},
                {"type": "counter", "name": "tracked_samples_completed", "value": self.completed},
                {"type": "counter", "name": "tracked_samples_failed", "value": self.failed},
                {"type": "counter", "name": "tracked_duration_ns", "value": self.duration_ns},
                {"type": "counter", "name": "legacy_loadgen_window_duration_ns",
                 "value": legacy_ns},
                *(
                    _series(name, values, self.block(values, integer=name != "tpot_ns"))
                    for name, values in (
                        ("sample_latency_ns", self.latency),
                        ("isl", self.isl),
                        ("osl", self.osl),
                        ("ttft_ns", self.ttft),
                        ("tpot_ns", self.tpot),
                    )
                ),
            ],
        }  # fmt: skip


def _series(name: str, values: list[Any], block: dict[str, Any]) -> dict[str, Any]:
    """A series of the snapshot, from its stat block (the one the summary shows)."""
    return {
        "type": "series",
        "name": name,
        "count": len(values),
        "total": block.get("total", 0),
        "min": block.get("min"),
        "max": block.get("max"),
        "sum_sq": sum(v * v for v in values),
        "percentiles": block.get("percentiles", {}),
    }


# What a recomputed summary is held to against the one already in the run folder: the
# counts, windows and rates, and the P50/P90/P99 and mean of every stat block.
COMPARED_NUMBERS = (
    "n_samples_issued",
    "n_samples_completed",
    "n_samples_failed",
    "duration_ns",
    "legacy_loadgen_window_duration_ns",
    "qps",
    "tps",
)
COMPARED_BLOCKS = ("ttft", "tpot", "latency", "output_sequence_lengths", "input_sequence_lengths")
COMPARED_STATS = ("avg", "50.0", "90.0", "99.0")
NEWER_FIELDS = ("finish_reason_counts", "input_sequence_lengths")  # absent in older summaries


def _number(summary: dict[str, Any], key: str) -> Any:
    block, _, stat = key.partition(".")
    if not stat:
        return summary.get(key)
    values = summary.get(block) or {}
    return values.get(stat) if stat == "avg" else (values.get("percentiles") or {}).get(stat)


def compare_summaries(
    ours: dict[str, Any], official: dict[str, Any], *, failures_as_failures: bool
) -> list[str]:
    """Each number of the *official* summary beside the recomputed one, one line each.

    Equal means equal to 1e-9 relative (the same arithmetic on the same events). Where
    the harness differs on purpose (failed requests are failures, not completions) the
    line says so; fields an older official summary lacks are named, not compared."""
    failed = int(official.get("n_samples_failed") or 0)
    deliberate = failures_as_failures and failed > 0
    keys = [*COMPARED_NUMBERS]
    keys += [f"{block}.{stat}" for block in COMPARED_BLOCKS for stat in COMPARED_STATS]
    lines = []
    for key in keys:
        theirs, mine = _number(official, key), _number(ours, key)
        if theirs is None and mine is None:
            continue
        if theirs is None:
            lines.append(f"{key}: not in the official summary; recomputed {mine:g}")
            continue
        if mine is None:
            lines.append(f"{key}: official {theirs:g}; not recomputed (no data)")
            continue
        same = math.isclose(float(theirs), float(mine), rel_tol=1e-9, abs_tol=1e-9)
        line = f"{key}: official {theirs:g}, recomputed {mine:g}"
        if same:
            lines.append(line + " (equal)")
        elif deliberate:
            lines.append(
                line + f" (differs on purpose: the {failed} failed request(s) are failures "
                "here, completions in the official client; recompute --official-failures "
                "gives its arithmetic)"
            )
        else:
            lines.append(line + " (DIFFERS)")
    for field_name in NEWER_FIELDS:
        if field_name not in official:
            lines.append(f"{field_name}: not in the official summary (an older schema)")
    return lines


def render_report(
    result: dict[str, Any], notes: list[str], comparison: list[str] | None = None
) -> str:
    """``report.txt``: the summary for people, and how it compares with the summary the
    run folder already had (``recompute``)."""
    lines = ["MLPerf Endpoints run report (endpoints-harness)", ""]
    for note in notes:
        lines.append(f"NOTE: {note}")
    if notes:
        lines.append("")
    if comparison:
        lines.append("Compared with the run folder's own result_summary.json:")
        lines += [f"  {line}" for line in comparison]
        lines.append("")
    duration = (result.get("duration_ns") or 0) / 1e9
    lines += [
        f"Samples issued:    {result['n_samples_issued']}",
        f"Samples completed: {result['n_samples_completed']}",
        f"Samples failed:    {result['n_samples_failed']}",
        f"Samples dropped:   {result['n_samples_dropped']}",
        f"Duration:          {duration:.3f} s",
        f"QPS:               {_fmt(result.get('qps'))}",
        f"TPS (output):      {_fmt(result.get('tps'))}",
        "",
    ]
    for key, label, scale, unit in (
        ("ttft", "TTFT", 1e6, "ms"),
        ("tpot", "TPOT", 1e6, "ms"),
        ("latency", "Latency", 1e6, "ms"),
        ("input_sequence_lengths", "Input sequence length", 1, "tokens"),
        ("output_sequence_lengths", "Output sequence length", 1, "tokens"),
    ):
        block = result.get(key) or {}
        if not block:
            lines.append(f"{label}: no data")
            continue
        lines.append(f"{label} ({unit}):")
        lines.append(
            f"  min {block['min'] / scale:.2f}  median {block['median'] / scale:.2f}  "
            f"avg {block['avg'] / scale:.2f}  max {block['max'] / scale:.2f}"
        )
        pct = block["percentiles"]
        lines.append(
            "  "
            + "  ".join(
                f"p{k.removesuffix('.0')} {pct[k] / scale:.2f}"
                for k in ("50.0", "90.0", "95.0", "99.0")
            )
        )
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
