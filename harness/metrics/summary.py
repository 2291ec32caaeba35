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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.metrics import events as ev
from harness.metrics.definitions import rate, stat_block
from harness.metrics.events import Output, Prompt, read_events
from harness.metrics.tokens import TokenCounter

TOKENIZE_BATCH = 256
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
    counts: Counts | None = LiveCounts(counter) if isinstance(counter, TokenCounter) else counter
    rows: dict[str, _Row] = {}
    tracking = False
    block_start = 0
    block_last = 0
    duration_ns = 0
    issued = completed = failed = 0
    ttft: list[int] = []
    tpot: list[float] = []
    latency: list[int] = []
    isl: list[int] = []
    osl: list[int] = []
    finish = dict.fromkeys(FINISH_REASONS, 0)
    first_issue_ns: int | None = None
    latest_issue_completed: tuple[int, int] | None = None  # (issued_ns, complete_ns)
    problems: list[str] = []
    negative_tpot = 0
    agentic = options.load_pattern == "agentic_inference"
    turn_tokens = 0  # tracked, successful turns: Σ output tokens …
    turn_time_ns = 0  # … and Σ serving time (tool delays between turns are not in it)
    osl_full_run: list[int] = []  # every completed turn, inside the window or after it
    # Agentic turns issued after STOP: outside the tracked set, yet e2e interactivity is
    # over all completed turns of all trajectories (rules §1.1). uuid → [issued, failed].
    late_turns: dict[str, list[int]] = {}
    started = False

    # Responses wait here to be tokenized together: encode_batch runs on all cores, and
    # the wait is bounded, so memory stays flat however large the file is.
    pending: list[tuple[str, int, Output, str | None, _Row, int]] = []

    def flush() -> None:
        nonlocal turn_tokens, turn_time_ns, negative_tpot
        if not pending:
            return
        assert counts is not None
        outputs = [item[2] for item in pending]
        with_tail = [item[4].recv_first_ns is not None for item in pending]
        counted = counts.outputs([item[1] for item in pending], outputs, with_tail)
        for (uuid_, line_, output_, reason_, row_, ts_), (n_out, n_after) in zip(
            pending, counted, strict=True
        ):
            if output_.content or output_.reasoning_text or output_.tool_calls:
                osl.append(n_out)
                osl_full_run.append(n_out)
            if agentic and not row_.failed:
                turn_tokens += n_out
                turn_time_ns += ts_ - row_.issued_ns
            if n_after is not None and n_after > 0 and row_.recv_first_ns is not None:
                value = (ts_ - row_.recv_first_ns) / n_after
                negative_tpot += value < 0
                tpot.append(value)
            if observer is not None:
                first = row_.recv_first_ns
                observer(
                    Completed(
                        uuid_, line_, output_, reason_, n_out, n_after, row_.failed,
                        ttft_ns=None if first is None else first - row_.issued_ns,
                        latency_ns=ts_ - row_.issued_ns, issued_ns=row_.issued_ns,
                        server_tokens=row_.server_tokens, prompt=row_.prompt,
                    )
                )  # fmt: skip
        pending.clear()

    def close_block() -> None:
        nonlocal duration_ns
        if block_last > block_start:
            duration_ns += block_last - block_start

    for line, event in read_events(path, strict=False, progress=progress):
        if "_error" in event:
            problems.append(f"line {line}: {event['_error']}")
            continue
        kind = event["event_type"]
        ts = event["timestamp_ns"]
        uuid = event.get("sample_uuid") or ""
        if kind == ev.START_TRACKING:
            if tracking:
                close_block()
            tracking = started = True
            block_start = block_last = ts
        elif kind == ev.STOP_TRACKING:
            tracking = False  # the window stays open until the last tracked completion
        elif kind == ev.ISSUED:
            if tracking:
                prompt = Prompt.from_data(event.get("data"))
                rows[uuid] = _Row(issued_ns=ts, prompt=prompt)
                issued += 1
                first_issue_ns = ts if first_issue_ns is None else min(first_issue_ns, ts)
                if counts is not None and options.count_input_tokens:
                    count = counts.prompt(line, prompt)
                    if count is not None:
                        isl.append(count)
            elif agentic and started:
                late_turns[uuid] = [ts, 0]
        elif kind == ev.ERROR:
            row = rows.get(uuid)
            if row is not None and not row.failed:
                row.failed = True
                failed += 1
            elif uuid in late_turns:
                late_turns[uuid][1] = 1
        elif kind == ev.RECV_FIRST:
            row = rows.get(uuid)
            if row is not None and row.recv_first_ns is None:
                row.recv_first_ns = ts
                ttft.append(ts - row.issued_ns)
        elif kind == ev.COMPLETE:
            row = rows.pop(uuid, None)
            if row is None:
                if agentic and counts is not None:
                    late = Output.from_data(event.get("data"))
                    turn = late_turns.pop(uuid, None)
                    if late is not None:
                        n_late = counts.output(line, late)
                        osl_full_run.append(n_late)
                        if turn is not None and not turn[1]:
                            turn_tokens += n_late
                            turn_time_ns += ts - turn[0]
                continue
            block_last = max(block_last, ts)
            if row.failed and not options.failures_as_completions:
                if observer is not None:
                    first = row.recv_first_ns
                    observer(
                        Completed(uuid, line, Output(None), None, 0, None, True,
                                  ttft_ns=None if first is None else first - row.issued_ns,
                                  latency_ns=ts - row.issued_ns, issued_ns=row.issued_ns,
                                  prompt=row.prompt)
                    )  # fmt: skip
                continue
            completed += 1
            latency.append(ts - row.issued_ns)
            if latest_issue_completed is None or row.issued_ns > latest_issue_completed[0]:
                latest_issue_completed = (row.issued_ns, ts)
            reason = event.get("finish_reason")
            row.server_tokens = server_tokens(event)
            if reason is not None:
                finish[reason if reason in finish else "other"] += 1
            output = Output.from_data(event.get("data"))
            if output is None or counts is None:
                if observer is not None:
                    first = row.recv_first_ns
                    observer(
                        Completed(uuid, line, output or Output(None), reason, 0, None, row.failed,
                                  ttft_ns=None if first is None else first - row.issued_ns,
                                  latency_ns=ts - row.issued_ns, issued_ns=row.issued_ns,
                                  prompt=row.prompt)
                    )  # fmt: skip
                continue
            pending.append((uuid, line, output, reason, row, ts))
            if len(pending) >= TOKENIZE_BATCH:
                flush()
    flush()
    if tracking or block_last > block_start:
        close_block()

    dropped = len(rows)  # issued in the window, never completed nor failed
    if observer is not None:
        # They keep their place in the issue order (steady state) and miss every SLO
        # (goodput): a request with no latency, in issue order.
        for uuid, row in sorted(rows.items(), key=lambda item: item[1].issued_ns):
            observer(
                Completed(uuid, 0, Output(None), None, 0, None, True,
                          issued_ns=row.issued_ns, prompt=row.prompt)
            )  # fmt: skip
    notes: list[str] = []
    if not options.failures_as_completions:
        notes.append(
            "failed requests are counted as failures, not completions "
            "(the official client counts them as completed)"
        )
    if dropped:
        notes.append(f"{dropped} request(s) issued in the window never finished and are excluded")
    if negative_tpot:
        notes.append(f"{negative_tpot} negative TPOT value(s) kept, as the official client does")
    if counts is None:
        notes.append("no reference tokenizer: token counts, TPOT and TPS are empty")

    legacy_ns = None
    if latest_issue_completed is not None and first_issue_ns is not None:
        legacy_ns = latest_issue_completed[1] - first_issue_ns
    use_legacy = (
        options.load_pattern == "poisson"
        and options.use_legacy_window_for_poisson
        and legacy_ns is not None
        and legacy_ns > 0
        and completed >= 2
    )
    osl_total = sum(osl) if osl else None
    if use_legacy:
        assert legacy_ns is not None
        qps = rate(completed - 1, legacy_ns)
        tps = rate(osl_total, legacy_ns) if osl_total is not None else None
    else:
        qps = rate(completed, duration_ns)
        tps = rate(osl_total, duration_ns) if osl_total is not None else None

    result: dict[str, Any] = {
        "version": VERSION,
        "git_sha": options.git_sha,
        "test_started_at": 0,
        "n_samples_issued": issued,
        "n_samples_completed": completed,
        "n_samples_failed": failed,
        "n_samples_succeeded": completed
        if options.failures_as_completions is False
        else completed - failed,
        "n_samples_dropped": dropped,
        "duration_ns": duration_ns or None,
        "state": "complete",
        "complete": True,
        "ttft": stat_block(ttft, integer=True),
        "tpot": stat_block(tpot),
        "latency": stat_block(latency, integer=True),
        "output_sequence_lengths": stat_block(osl, integer=True),
        "input_sequence_lengths": stat_block(isl, integer=True),
        "legacy_loadgen_window_duration_ns": legacy_ns if use_legacy else None,
        "qps": qps,
        "tps": tps,
        "finish_reason_counts": finish,
        "run_config": options.run_config,
        **(
            {
                "output_tokens_per_turn_total": float(turn_tokens),
                "e2e_turn_time_seconds_total": turn_time_ns / 1e9,
                "e2e_avg_interactivity": rate(turn_tokens, turn_time_ns),
                "output_sequence_lengths_full_run": {
                    "output_sequence_lengths": stat_block(osl_full_run, integer=True)
                },
            }
            if agentic and counts is not None
            else {}
        ),
        "harness": {"failures_as_completions": options.failures_as_completions, "notes": notes},
    }
    snapshot = {
        "state": "complete",
        "n_pending_tasks": 0,
        "metrics": [
            {"type": "counter", "name": "tracked_samples_issued", "value": issued},
            {"type": "counter", "name": "tracked_samples_completed", "value": completed},
            {"type": "counter", "name": "tracked_samples_failed", "value": failed},
            {"type": "counter", "name": "tracked_duration_ns", "value": duration_ns},
            {"type": "counter", "name": "legacy_loadgen_window_duration_ns", "value": legacy_ns},
            *(
                _series(name, values)
                for name, values in (
                    ("sample_latency_ns", latency),
                    ("isl", isl),
                    ("osl", osl),
                    ("ttft_ns", ttft),
                    ("tpot_ns", tpot),
                )
            ),
        ],
    }
    return Summary(result=result, snapshot=snapshot, notes=notes, problems=problems)


def _series(name: str, values: list[Any]) -> dict[str, Any]:
    block = stat_block(values)
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
