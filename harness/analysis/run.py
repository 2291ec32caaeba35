"""``endpoints-harness analyze RUN_DIR``: a run folder's run over time and steady state.

One read of ``events.jsonl`` (the summary's own, with the requests' timings collected as
it goes) gives ``RUN_DIR/analysis/timeseries.json`` and, for a fixed-concurrency run,
``RUN_DIR/analysis/steady_state.json`` (``steady_state.py``): the documents the portal
stores and serves for a re-counted point.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from submission_checker.models.regions import min_duration_ms

from harness.analysis.steady_state import Method, analyse_steady_state
from harness.analysis.timeseries import run_time_series
from harness.metrics.summary import Summary, SummaryOptions, summarize
from harness.metrics.timings import RequestTimings
from harness.metrics.tokens import TokenCounter

# Steady state is defined for fixed-concurrency points only (rules §2.4, scope).
STEADY_STATE_PATTERNS = ("concurrency",)
POINT_WINDOW_KEYS = (
    "super_pass_start",
    "super_pass_end",
    "super_pass_size",
    "n_samples",
    "duration_s",
)
# The gated metrics and the P90 that R §4.4's table names.
POINT_STATE_KEYS = ("ttft_p50", "ttft_p90", "ttft_p95", "tpot_p50", "tpot_p90", "tpot_p95")


def steady_state_applies(load_pattern: str, offline: str | None = None) -> bool:
    """Steady state is a fixed-concurrency point's (rules §2.4): not a dedicated Offline
    point's, whatever load pattern its point.yaml names, nor an agentic or Poisson run's."""
    return load_pattern in STEADY_STATE_PATTERNS and offline != "dedicated"


class NoSuperPassSize(ValueError):
    pass


@dataclass
class RunAnalysis:
    summary: Summary
    timeseries: dict[str, Any] | None
    steady_state: dict[str, Any] | None


def dataset_size(run_dir: Path) -> int | None:
    """One pass over the dataset, as the harness records it in ``config.yaml``."""
    path = run_dir / "config.yaml"
    config = yaml.safe_load(path.read_text()) if path.is_file() else None
    datasets = (config or {}).get("datasets") if isinstance(config, dict) else None
    first = datasets[0] if isinstance(datasets, list) and datasets else {}
    size = first.get("samples") if isinstance(first, dict) else None
    return size if isinstance(size, int) and size > 0 else None


def regional_minimum_s(region: str | None, concurrency: int, *, agentic: bool = False) -> float:
    """Rules §6.2's minimum steady-state duration, from the official checker's table; a
    point above Ultra Low whose region is not given takes the Low/Medium/High one."""
    return min_duration_ms(region or "low_concurrency", concurrency, agentic=agentic) / 1000


def run_method(
    run_dir: Path,
    concurrency: int,
    *,
    super_pass_size: int | None = None,
    warmup: int = 1,
    min_duration_s: float | None = None,
    region: str | None = None,
) -> Method:
    size = super_pass_size or dataset_size(run_dir)
    if not size:
        raise NoSuperPassSize(
            "the run folder does not record its dataset size: pass --superpass-size (one "
            "pass over the dataset, rules §2.1)"
        )
    if min_duration_s is None:
        min_duration_s = regional_minimum_s(region, concurrency)
    return Method(super_pass_size=size, warmup=warmup, min_duration_s=min_duration_s)


def analyse_run(
    run_dir: Path, counter: TokenCounter | None, options: SummaryOptions, method: Method | None
) -> RunAnalysis:
    """Compute and write ``analysis/``; the steady state only for a fixed-concurrency run
    and with a *method*."""
    timings = RequestTimings()
    summary = summarize(run_dir / "events.jsonl", counter, options, observer=timings)
    return write_analysis(run_dir, summary, timings, method, options.load_pattern)


def write_analysis(
    run_dir: Path,
    summary: Summary,
    timings: RequestTimings,
    method: Method | None,
    load_pattern: str,
) -> RunAnalysis:
    """``analysis/`` from the timings collected while *summary* was computed."""
    t = timings.timings()
    series = run_time_series(t)
    steady = None
    if method is not None and steady_state_applies(load_pattern):
        steady = analyse_steady_state(t, method)
    out = run_dir / "analysis"
    out.mkdir(exist_ok=True)
    if series is not None:
        (out / "timeseries.json").write_text(json.dumps(series) + "\n")
    if steady is not None:
        (out / "steady_state.json").write_text(json.dumps(steady, indent=2) + "\n")
    return RunAnalysis(summary, series, steady)


def point_block(doc: dict[str, Any]) -> dict[str, Any]:
    """The ``steady_state`` block of ``point.yaml`` (rules §2.5) from an analysis, as a
    submitter would copy it: status, verdict, the window, per-metric state, the anomaly
    only on a level shift."""
    block: dict[str, Any] = {"status": doc["status"], "verdict": doc["verdict"]}
    window = doc.get("window")
    if window:
        block["window"] = {k: window[k] for k in POINT_WINDOW_KEYS}
        block["state"] = {k: v for k, v in doc["state"].items() if k in POINT_STATE_KEYS}
    if doc.get("anomaly"):
        block["anomaly"] = doc["anomaly"]
    return block
