"""How far an endpoint goes within an SLA: the highest load whose point meets it.

The load is the concurrency of a ``concurrency`` run or the target QPS of a ``poisson``
run. The search probes with short runs, first doubling from ``start`` until a probe
misses (bracketing), then halving the interval between the last level that met the SLA
and the first that missed (bisection) until it is one ``step`` wide (users for
concurrency, a fraction of the level for QPS: 0.05 stops within 5 %); every probe counts
against ``max_probes``. A final full-length run at the level found is the answer's
evidence, in the official run-folder layout.

A probe misses when its TTFT P90 is over the limit, its tokens/s per user (``1000 /
TPOT P90 ms``, as the official metric) is under the minimum, more than ``max_error_rate``
of its requests failed, or it is **over-saturated**: the requests issued in the last third
of the probe waited for their first token more than ``OVERLOAD_GROWTH`` times as long
(median) as those of the first third, so the queue was still growing when the probe
stopped and a longer run would only be worse. Over-saturation and errors end the
bracketing at once: there is no point probing further up.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.load.dataset import Sample
from harness.load.engine import RunConfig
from harness.load.loadgen import RunResult, run_point
from harness.metrics import events as ev
from harness.metrics.tokens import TokenCounter

OVERLOAD_GROWTH = 2.0
# Below this TTFT a "growing" queue is noise (a few ms either way), not over-saturation.
OVERLOAD_FLOOR_MS = 20.0


@dataclass(frozen=True)
class SlaTarget:
    ttft_p90_max_ms: float | None = None
    tps_per_user_min: float | None = None
    max_error_rate: float = 0.05

    def __post_init__(self) -> None:
        if self.ttft_p90_max_ms is None and self.tps_per_user_min is None:
            raise ValueError("give --ttft-p90-max-ms, --tps-per-user-min or both")

    def misses(self, ttft_p90_ms: float | None, tps_per_user: float | None) -> list[str]:
        """Why a point with these P90 metrics misses the latency SLA (empty: it meets it)."""
        why = []
        if self.ttft_p90_max_ms is not None and (
            ttft_p90_ms is None or ttft_p90_ms > self.ttft_p90_max_ms
        ):
            why.append(f"TTFT P90 {_ms(ttft_p90_ms)} > {self.ttft_p90_max_ms:g} ms")
        if self.tps_per_user_min is not None and (
            tps_per_user is None or tps_per_user < self.tps_per_user_min
        ):
            shown = "none" if tps_per_user is None else f"{tps_per_user:.1f}"
            why.append(f"tok/s per user {shown} < {self.tps_per_user_min:g}")
        return why

    def summary_misses(self, summary: dict[str, Any]) -> list[str]:
        """Why a run with this summary misses the latency SLA (empty: it meets it)."""
        return self.misses(*point_metrics(summary))


@dataclass
class Probe:
    level: float
    completed: int
    failed: int
    ttft_p90_ms: float | None
    tps_per_user: float | None
    ttft_growth: float | None  # late / early median TTFT within the probe
    misses: list[str] = field(default_factory=list)
    overloaded: bool = False  # over-saturated or erroring: nothing above it can meet the SLA

    @property
    def meets(self) -> bool:
        return not self.misses


@dataclass
class SearchResult:
    load_pattern: str
    sla: SlaTarget
    probes: list[Probe]
    level: float | None  # the highest level that met the SLA (None: not even the first)
    above: float | None  # the lowest level that missed it (None: none missed)
    final: RunResult | None
    stopped: str  # why the search ended

    def to_json(self) -> dict[str, Any]:
        return {
            "load_pattern": self.load_pattern,
            "sla": asdict(self.sla),
            "level": self.level,
            "above": self.above,
            "stopped": self.stopped,
            "probes": [asdict(p) | {"meets": p.meets} for p in self.probes],
        }


def _ms(value: float | None) -> str:
    return "none" if value is None else f"{value:.1f} ms"


def ttft_growth(events_path: Path) -> float | None:
    """Median TTFT of the requests issued in the last third of the run over that of the
    first third (issue order, tracked requests); None with too few requests to tell."""
    issued: dict[str, int] = {}
    firsts: list[tuple[int, int]] = []
    tracking = False
    for _line, event in ev.read_events(events_path, strict=False):
        kind = event.get("event_type")
        if kind == ev.START_TRACKING:
            tracking = True
        elif kind == ev.STOP_TRACKING:
            tracking = False
        elif kind == ev.ISSUED and tracking:
            issued[event["sample_uuid"]] = event["timestamp_ns"]
        elif kind == ev.RECV_FIRST:
            start = issued.pop(event.get("sample_uuid") or "", None)
            if start is not None:
                firsts.append((start, event["timestamp_ns"] - start))
    if len(firsts) < 9:
        return None
    firsts.sort()
    third = len(firsts) // 3
    early = statistics.median(t for _, t in firsts[:third]) / 1e6
    late = statistics.median(t for _, t in firsts[-third:]) / 1e6
    if late < OVERLOAD_FLOOR_MS:
        return 1.0
    return late / max(early, 1e-3)


def point_metrics(summary: dict[str, Any]) -> tuple[float | None, float | None]:
    """A summary's TTFT P90 (ms) and per-user rate: ``e2e_avg_interactivity`` on agentic
    runs (rules §4.1), else ``1000 / TPOT P90 ms``."""
    ttft = (summary.get("ttft") or {}).get("percentiles", {}).get("90.0")
    tpot = (summary.get("tpot") or {}).get("percentiles", {}).get("90.0")
    rate = summary.get("e2e_avg_interactivity")
    if rate is None:
        rate = 1e9 / tpot if tpot else None
    return (None if ttft is None else ttft / 1e6), rate


def judge(level: float, result: RunResult, sla: SlaTarget) -> Probe:
    r = result.summary.result
    ttft_ms, rate = point_metrics(r)
    issued = r.get("n_samples_issued") or 0
    failed = r.get("n_samples_failed") or 0
    growth = ttft_growth(result.run_dir / "events.jsonl")
    probe = Probe(
        level=level,
        completed=r.get("n_samples_completed") or 0,
        failed=failed,
        ttft_p90_ms=ttft_ms,
        tps_per_user=rate,
        ttft_growth=growth,
    )
    probe.misses = sla.misses(probe.ttft_p90_ms, probe.tps_per_user)
    if issued == 0:
        probe.misses.append("no request was issued")
        probe.overloaded = True
    elif failed / issued > sla.max_error_rate:
        probe.misses.append(f"{failed / issued:.1%} of requests failed")
        probe.overloaded = True
    if growth is not None and growth > OVERLOAD_GROWTH:
        probe.misses.append(f"over-saturated: TTFT grew {growth:.1f}× during the probe")
        probe.overloaded = True
    if result.aborted:
        probe.misses.append(result.aborted)
        probe.overloaded = True
    return probe


def _config_at(base: RunConfig, level: float, duration_s: float) -> RunConfig:
    if base.load_pattern == "poisson":
        return replace(base, target_qps=level, duration_s=duration_s, n_samples=None)
    return replace(base, concurrency=int(level), duration_s=duration_s, n_samples=None)


@dataclass(frozen=True)
class Levels:
    """The levels a search may probe: from *start* to *highest*, to within *step* (whole
    users for a concurrency run, a share of the QPS for a Poisson one)."""

    start: float
    highest: float
    step: float
    integer: bool

    def close(self, met: float, missed: float) -> bool:
        if self.integer:
            return missed - met <= self.step
        return missed <= met * (1 + self.step)

    def level_of(self, value: float) -> float:
        return float(max(1, math.floor(value))) if self.integer else value


def _limit(
    meets: Callable[[float], bool], levels: Levels, max_probes: int, probed: Callable[[], int]
) -> tuple[float | None, float | None, str]:
    """The highest level that met the SLA, the lowest that missed it, and why the search
    stopped: double until a probe misses, then bisect between the two."""
    met: float | None = None
    missed: float | None = None
    level = levels.level_of(levels.start)
    stopped = ""
    while probed() < max_probes:
        if not meets(level):
            missed = level
            break
        met = level
        if level >= levels.highest:
            stopped = f"met the SLA at the highest level asked for ({levels.highest:g})"
            break
        level = min(levels.level_of(level * 2), levels.highest)
    while not stopped and met is not None and missed is not None:
        if levels.close(met, missed):
            stopped = f"the limit is between {met:g} (met) and {missed:g} (missed)"
            break
        if probed() >= max_probes:
            stopped = f"stopped after {max_probes} probes, between {met:g} and {missed:g}"
            break
        mid = levels.level_of((met + missed) / 2)
        if mid <= met or mid >= missed:
            stopped = f"the limit is between {met:g} (met) and {missed:g} (missed)"
            break
        if meets(mid):
            met = mid
        else:
            missed = mid
    if met is None:
        stopped = stopped or f"not even {levels.level_of(levels.start):g} meets the SLA"
    elif not stopped:
        stopped = f"stopped after {max_probes} probes while bracketing, at {met:g}"
    return met, missed, stopped


def search(
    base: RunConfig,
    samples: list[Sample],
    counter: TokenCounter | None,
    sla: SlaTarget,
    output: Path,
    *,
    start: float = 1,
    max_level: float = 4096,
    step: float | None = None,
    probe_s: float = 10.0,
    final_s: float = 60.0,
    max_probes: int = 16,
    on_probe: Callable[[Probe], None] | None = None,
) -> SearchResult:
    """Find the highest level in ``[start, max_level]`` that meets *sla*, to within *step*
    (default: 1 user, or 5 % of the QPS)."""
    if base.load_pattern not in ("concurrency", "poisson"):
        raise ValueError("search varies a concurrency or poisson run's load")
    if sla.tps_per_user_min is not None and counter is None:
        raise ValueError("tokens/s per user needs a tokenizer (--tokenizer) to count tokens")
    integer = base.load_pattern == "concurrency"
    step = step if step is not None else (1.0 if integer else 0.05)
    if not (0 < start <= max_level) or step <= 0:
        raise ValueError("need 0 < --start <= --max-level and --step > 0")

    def run(config: RunConfig, folder: Path) -> RunResult:
        return run_point(config, samples, folder, counter)

    probes: list[Probe] = []
    scratch = Path(tempfile.mkdtemp(prefix="harness-search-"))
    try:

        def meets(level: float) -> bool:
            folder = scratch / f"probe-{len(probes) + 1}"
            judged = judge(level, run(_config_at(base, level, probe_s), folder), sla)
            shutil.rmtree(folder, ignore_errors=True)
            probes.append(judged)
            if on_probe is not None:
                on_probe(judged)
            return judged.meets

        met, missed, stopped = _limit(
            meets, Levels(start, max_level, step, integer), max_probes, lambda: len(probes)
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    final = None
    if met is not None:
        final = run(_config_at(base, met, final_s), output)
    result = SearchResult(base.load_pattern, sla, probes, met, missed, final, stopped)
    if final is not None:
        (output / "search.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
    return result


def probe_table(load_pattern: str, probes: list[Probe]) -> str:
    """The probes as a fixed-width table, one line each."""
    unit = "qps" if load_pattern == "poisson" else "concurrency"
    head = f"{'probe':>5}  {unit:>11}  {'completed':>9}  {'failed':>6}  {'TTFT P90':>10}  "
    head += f"{'tok/s/user':>10}  verdict"
    lines = [head]
    for i, p in enumerate(probes, start=1):
        speed = "—" if p.tps_per_user is None else f"{p.tps_per_user:.1f}"
        lines.append(
            f"{i:>5}  {p.level:>11g}  {p.completed:>9}  {p.failed:>6}  "
            f"{_ms(p.ttft_p90_ms):>10}  {speed:>10}  "
            + ("meets" if p.meets else "misses: " + "; ".join(p.misses))
        )
    return "\n".join(lines)
