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

from .steady_state import Method, analyse_steady_state
from .summary import Summary, SummaryOptions, summarize
from .timeseries import run_time_series
from .timings import RequestTimings
from .tokens import TokenCounter

# Steady state is defined for fixed-concurrency points only (rules §2.4, scope).
STEADY_STATE_PATTERNS = ("concurrency",)


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
    t = timings.timings()
    series = run_time_series(t)
    steady = None
    if method is not None and options.load_pattern in STEADY_STATE_PATTERNS:
        steady = analyse_steady_state(t, method)
    out = run_dir / "analysis"
    out.mkdir(exist_ok=True)
    if series is not None:
        (out / "timeseries.json").write_text(json.dumps(series) + "\n")
    if steady is not None:
        (out / "steady_state.json").write_text(json.dumps(steady, indent=2) + "\n")
    return RunAnalysis(summary, series, steady)
