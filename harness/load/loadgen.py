"""Run one point against an endpoint and write the run folder in the official layout:
in one process (``engine``) or several (``workers``), then its summary and analysis."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.analysis.run import RunAnalysis, regional_minimum_s, write_analysis
from harness.analysis.steady_state import Method
from harness.load.agentic import Conversation
from harness.load.dataset import Sample
from harness.load.engine import (
    AGENTIC,
    Progress,
    RunConfig,
    ensure_open_files,
    run_conversations,
    run_event_loop,
    run_samples,
)
from harness.load.workers import run_in_processes
from harness.metrics.events import EventWriter
from harness.metrics.summary import (
    Completed,
    Counts,
    Summary,
    SummaryOptions,
    compare_summaries,
    render_report,
    summarize,
)
from harness.metrics.timings import RequestTimings, Timings
from harness.metrics.tokens import TokenCounter


@dataclass
class RunResult:
    run_dir: Path
    summary: Summary
    aborted: str | None = None  # why issuing stopped early, if it did
    steady_state: dict[str, Any] | None = None  # fixed-concurrency runs (analysis/)
    timings: Timings | None = None  # every tracked request's, as the summary read them


def run_point(
    config: RunConfig,
    samples: list[Sample] | list[Conversation],
    run_dir: Path,
    counter: TokenCounter | None,
    *,
    progress: Callable[[str], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunResult:
    """Measure one point and write ``run_dir`` in the official layout."""
    config.validate()
    if not samples:
        raise ValueError("the dataset has no samples")
    if config.load_pattern in ("concurrency", AGENTIC):
        ensure_open_files(config.concurrency)
    run_dir.mkdir(parents=True, exist_ok=True)
    if config.workers > 1:
        plain = [s for s in samples if isinstance(s, Sample)]
        if len(plain) != len(samples):
            raise ValueError(f"a {config.load_pattern} run needs a prompt dataset")
        session = run_in_processes(config, plain, run_dir)
        return _finish(run_dir, config, counter, session, progress, len(samples))
    writer = EventWriter(run_dir / "events.jsonl")
    try:
        if config.load_pattern == AGENTIC:
            conversations = [c for c in samples if isinstance(c, Conversation)]
            if len(conversations) != len(samples):
                raise ValueError("an agentic run needs conversations (an agentic dataset)")
            session = run_event_loop(run_conversations(config, conversations, writer, on_progress))
        else:
            plain = [s for s in samples if isinstance(s, Sample)]
            if len(plain) != len(samples):
                raise ValueError(f"a {config.load_pattern} run needs a prompt dataset")
            session = run_event_loop(run_samples(config, plain, writer, on_progress))
    finally:
        writer.close()
    return _finish(run_dir, config, counter, session, progress, len(samples))


def _finish(
    run_dir: Path,
    config: RunConfig,
    counter: TokenCounter | None,
    session: Any,
    progress: Callable[[str], None] | None,
    dataset_size: int,
) -> RunResult:
    """The run folder's derived files, from its events (one process or several)."""
    if progress:
        progress(f"issued {session.issued}, dropped {session.dropped}; computing metrics")
    write_config(run_dir, config, dataset_size)
    (run_dir / "sample_idx_map.json").write_text(json.dumps({"performance": session.index_map}))
    summary, analysis, timings = write_measurements(run_dir, config, counter, dataset_size)
    if session.aborted:
        with (run_dir / "report.txt").open("a") as fh:
            fh.write(f"\nNOTE: {session.aborted}\n")
    return RunResult(run_dir, summary, session.aborted, analysis.steady_state, timings.timings())


def write_measurements(
    run_dir: Path, config: RunConfig, counter: TokenCounter | None, dataset_size: int
) -> tuple[Summary, RunAnalysis, RequestTimings]:
    """Everything measured from the run folder's ``events.jsonl``, in one read: the
    summary and its files, then the run over time and its steady state (analysis/)."""
    timings = RequestTimings()
    summary = write_summary(run_dir, counter, summary_options(config), observer=timings)
    method = Method(
        super_pass_size=dataset_size, min_duration_s=regional_minimum_s(None, config.concurrency)
    )
    analysis = write_analysis(run_dir, summary, timings, method, config.load_pattern)
    return summary, analysis, timings


def summary_options(config: RunConfig) -> SummaryOptions:
    return SummaryOptions(
        load_pattern=config.load_pattern,
        run_config={
            "load_pattern": {
                "type": {"offline": "max_throughput"}.get(config.load_pattern, config.load_pattern),
                "target_qps": config.target_qps,
                "target_concurrency": config.concurrency,
            },
            "warmup": {"enabled": config.warmup_requests > 0, "n_requests": config.warmup_requests},
            "scheduler_random_seed": config.arrival_seed,
            "dataloader_random_seed": config.seed,
        },
    )


def write_config(run_dir: Path, config: RunConfig, dataset_size: int | None = None) -> None:
    """``config.yaml`` in the official client's shape, with the dataset's size (one pass:
    the steady-state analysis's super-pass) and the harness's own configuration."""
    data = {
        "name": f"{config.model}-{config.load_pattern}",
        "type": "offline" if config.load_pattern == "offline" else "online",
        "model_params": {"name": config.model, "streaming": config.streaming},
        "datasets": [{"name": "performance", "type": "performance", "samples": dataset_size}],
        "settings": {
            "load_pattern": {
                "type": {"offline": "max_throughput"}.get(config.load_pattern, config.load_pattern),
                "target_concurrency": config.concurrency,
                "target_qps": config.target_qps,
            },
            "runtime": {
                "seed": config.seed,
                "duration_s": config.duration_s,
                "n_samples": config.n_samples,
            },
        },
        "endpoint_config": {
            "endpoints": [config.endpoint],
            "api_key": "<redacted>" if config.api_key else None,
            "api_type": config.api,
        },
        "harness": config.redacted(),
    }
    (run_dir / "config.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def official_summary(run_dir: Path) -> dict[str, Any] | None:
    """The summary a run folder holds: ``performance/result_summary.json``, or the flat
    ``result_summary.json`` of older archives; None when neither can be read."""
    for path in (run_dir / "performance" / "result_summary.json", run_dir / "result_summary.json"):
        if path.is_file():
            try:
                data = json.loads(path.read_text())
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def write_summary(
    run_dir: Path,
    counter: TokenCounter | Counts | None,
    options: SummaryOptions,
    official: dict[str, Any] | None = None,
    *,
    observer: Callable[[Completed], None] | None = None,
) -> Summary:
    """Compute the summary from ``events.jsonl`` and write every derived file; with the
    *official* summary the folder had, ``report.txt`` compares every number with it."""
    summary = summarize(run_dir / "events.jsonl", counter, options, observer=observer)
    # The event log the numbers come from, by hash, as newer official clients record it.
    summary.result["events_sha256"] = file_sha256(run_dir / "events.jsonl")
    comparison = None
    if official is not None:
        comparison = compare_summaries(
            summary.result,
            official,
            failures_as_failures=not options.failures_as_completions,
        )
        summary.comparison = comparison
    (run_dir / "performance").mkdir(exist_ok=True)
    (run_dir / "performance" / "result_summary.json").write_text(
        json.dumps(summary.result, indent=2)
    )
    (run_dir / "metrics").mkdir(exist_ok=True)
    (run_dir / "metrics" / "final_snapshot.json").write_text(json.dumps(summary.snapshot, indent=2))
    (run_dir / "metrics" / ".ready").touch()
    (run_dir / "report.txt").write_text(render_report(summary.result, summary.notes, comparison))
    return summary


def options_from_run_dir(run_dir: Path) -> SummaryOptions:
    """Rebuild the summary options a run was made with, from its ``config.yaml``: the
    harness's own ``harness:`` block, or else the official client's ``settings``
    (``load_pattern.type``, its targets and ``use_legacy_loadgen_qps_metrics``, the
    official default being the legacy window for Poisson runs)."""
    config = yaml.safe_load((run_dir / "config.yaml").read_text()) or {}
    harness = config.get("harness")
    if harness:
        return summary_options(
            RunConfig(
                endpoint=harness.get("endpoint", ""),
                model=harness.get("model", ""),
                load_pattern=harness.get("load_pattern", "concurrency"),
                concurrency=int(harness.get("concurrency", 1)),
                target_qps=harness.get("target_qps"),
                warmup_requests=int(harness.get("warmup_requests", 0)),
                seed=int(harness.get("seed", 42)),
                scheduler_seed=harness.get("scheduler_seed"),
            )
        )
    pattern = ((config.get("settings") or {}).get("load_pattern")) or {}
    kind = str(pattern.get("type") or "concurrency")
    options = summary_options(
        RunConfig(
            endpoint="",
            model=str((config.get("model_params") or {}).get("name") or ""),
            load_pattern={"max_throughput": "offline"}.get(kind, kind),
            concurrency=int(pattern.get("target_concurrency") or 1),
            target_qps=pattern.get("target_qps"),
        )
    )
    legacy = pattern.get("use_legacy_loadgen_qps_metrics")
    options.use_legacy_window_for_poisson = True if legacy is None else bool(legacy)
    # The official summary's own run configuration, echoed as it was (warm-up, seeds).
    echoed = (official_summary(run_dir) or {}).get("run_config")
    if isinstance(echoed, dict):
        options.run_config = echoed
    return options
