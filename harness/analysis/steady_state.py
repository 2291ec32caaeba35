"""Steady state of a fixed-concurrency point, from its requests (rules §2, R §4.4).

The official metrics of a v1.0 point come from a detected steady-state window. This is
our own implementation of the official client's post-hoc diagnostics, step by step as
rules §2.6 states the method, so that on the same events it names the same window:

1. **Super-passes.** Every performance-tracked request (completed, failed, or issued and
   never completed) in issue order, cut into super-passes of ``super_pass_size`` (one
   pass over the dataset unless the benchmark sets another size); a trailing partial
   super-pass is a super-pass too. The first ``warmup`` (1) are dropped.
2. **Per super-pass**, the ``lower`` nearest-rank percentile of TTFT (issue → first chunk,
   of every request that had one) and TPOT ((complete − first chunk) / tokens after it,
   of every completed request with tokens after it).
3. **Gated metrics**: TTFT and TPOT at P50 and P95. P90 and P99 get a state for a
   declared block that names them, but never decide anything.
4. A window is **admissible** when every super-pass in it measured every gated metric
   and each gated metric is trend-steady by Mann–Kendall with the Hamed–Rao correction
   at ``alpha`` (on the raw per-super-pass values) and has a coefficient of variation
   (population standard deviation over |mean|) of at most ``cov_bound``.
5. **Plateaus** grow from the left: from a start, the window widens one super-pass at a
   time from ``MIN_TREND_N`` and stops at the first width that is not admissible; the
   widest admissible one is a plateau, and the search resumes after it (or one
   super-pass later when no width was admissible). The **first plateau** is the steady
   state, however long: estimator precision chooses, never throughput.
6. **Anomaly** (a level shift): a later plateau whose mean TPOT (of its requests) differs
   from the first plateau's by more than ``shift_pct`` %, while Pettitt's test on the
   per-super-pass mean TPOT of the whole run after the warm-up is significant at
   ``alpha``; the first such plateau gives ``delta_pct``, Pettitt the change point.
7. **Drifting up**: a gated metric whose trend (the same test) from the first plateau's
   start to the end of the run is rising; with no plateau, over the whole run.

From that result (the method itself names no status and no verdict):

- ``status`` (§2.3): ``partial_dataset`` with fewer requests than one super-pass;
  ``insufficient_passes`` with no plateau; otherwise ``windowable`` when the plateau's
  issue-time span reaches the §6.2 minimum, else ``insufficient_duration``.
- ``verdict`` (§2.4): ``not found`` with no plateau; ``drifting_up`` when a gated metric
  rises over the tail and, if a level shift is detected too, still rises after its change
  point (a step up also rises from the plateau's start to the end: then the step is what
  explains it); else ``anomaly`` when a level shift is detected; else ``STEADY STATE``.
  The method never reports drifting down, so neither does this; its ``global_trend``
  shows a falling tail as ``down``.
- ``state``: each metric's trend inside the window (Plateau for every gated one, by
  construction), in point.yaml's words.

Where the rules' text reads otherwise (P90 in R §4.4's table, one trend test per metric),
the method is followed and the document's ``notes`` say so.

Super-passes are numbered from 0 over the whole run, the warm-up ones included, with an
inclusive end, as ``point.yaml`` numbers them (the diagnostics' ``sp_lo + warmup .. sp_hi
+ warmup − 1``). Times are seconds from the first tracked issue, the time series' origin.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.metrics.definitions import percentile_lower
from harness.metrics.timings import Timings

MIN_TREND_N = 4
# Autocorrelations of the ranks count when beyond this many standard errors (95 %): the
# method's fixed bound, whatever the trend test's alpha.
ACF_Z = 1.96
STATUSES = ("windowable", "insufficient_duration", "insufficient_passes", "partial_dataset")
# The §2.4 vocabulary: a declared block may say "drifting_down"; the method never does.
VERDICTS = ("STEADY STATE", "drifting_up", "drifting_down", "anomaly", "not found")
PLATEAU, UP, DOWN = "Plateau", "Drifting Up", "Drifting Down"
GATED = ("ttft_p50", "ttft_p95", "tpot_p50", "tpot_p95")
TRACKED = ("ttft_p50", "ttft_p90", "ttft_p95", "ttft_p99",
           "tpot_p50", "tpot_p90", "tpot_p95", "tpot_p99")  # fmt: skip
NOTES = (
    "R §4.4's table names P90; the method gates TTFT and TPOT at P50 and P95",
    "the rules speak of a trend test per metric; the method admits a window only when "
    "every gated metric passes it together",
)
Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Method:
    """The detector's settings; every one is written into the document it produces."""

    super_pass_size: int
    warmup: int = 1
    alpha: float = 0.05
    cov_bound: float = 0.08  # the loosest of the diagnostics' --cov-bounds 0.03,0.05,0.08
    min_trend_n: int = MIN_TREND_N
    shift_pct: float = 5.0
    min_duration_s: float = 0.0  # the §6.2 minimum for the point's region


@dataclass(frozen=True)
class Trend:
    direction: int  # +1 rising, −1 falling, 0 steady (or too few values to say)
    z: float
    p: float
    sufficient: bool = True  # at least MIN_TREND_N values


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))


def mann_kendall(series: Floats, alpha: float = 0.05) -> Trend:
    """Mann–Kendall on the raw values with the Hamed–Rao (1998) variance correction: the
    variance of S is scaled by 1 + 2/(n(n−1)(n−2)) · Σ (n−k)(n−k−1)(n−k−2) ρ_k over the
    lags whose rank autocorrelation ρ_k is significant; a non-positive factor falls back
    to the plain variance. Fewer than ``MIN_TREND_N`` values: no verdict."""
    x = np.asarray(series, dtype=np.float64)
    n = len(x)
    if n < MIN_TREND_N:
        return Trend(0, 0.0, 1.0, sufficient=False)
    i, j = np.triu_indices(n, k=1)
    s = float(np.sign(x[j] - x[i]).sum())
    _, ties = np.unique(x, return_counts=True)
    var_s = (n * (n - 1) * (2 * n + 5) - float((ties * (ties - 1) * (2 * ties + 5)).sum())) / 18
    if var_s <= 0:  # every value equal
        return Trend(int(np.sign(s)), 0.0, 0.0)
    # Ranks 1 … n in sorted order, ties in the order they came (as the method ranks).
    ranks = np.empty(n, dtype=np.float64)
    ranks[np.argsort(x, kind="stable")] = np.arange(1, n + 1)
    centred = ranks - ranks.mean()
    denominator = float((centred * centred).sum())
    r = np.correlate(centred, centred, "full")[n : 2 * n - 1] / denominator  # lags 1 … n−1
    k = np.arange(1, n, dtype=np.float64)
    weights = (n - k) * (n - k - 1) * (n - k - 2)
    significant = np.abs(r) > ACF_Z / math.sqrt(n)
    factor = 1 + 2 / (n * (n - 1) * (n - 2)) * float((weights * r)[significant].sum())
    var_s *= factor if factor > 0 else 1.0
    z = (s - math.copysign(1, s)) / math.sqrt(var_s) if s else 0.0
    p = 2 * _normal_sf(abs(z))
    return Trend(int(np.sign(s)) if p < alpha else 0, z, p)


def pettitt(series: Floats) -> tuple[int, float]:
    """Pettitt's change-point test: the size of the first segment and the approximate
    p-value ``2·exp(−6K²/(n³+n²))``; fewer than ``MIN_TREND_N`` values: none (0, 1)."""
    x = np.asarray(series, dtype=np.float64)
    n = len(x)
    if n < MIN_TREND_N:
        return 0, 1.0
    signs = np.sign(x[None, :] - x[:, None])  # signs[i, j] = sign(x_j − x_i)
    # U_t = Σ_{i≤t} Σ_{j>t} sign(x_j − x_i), for t = 0 … n−2 (= 2·Σ ranks − t(n+1)).
    u = np.array([signs[: t + 1, t + 1 :].sum() for t in range(n - 1)], dtype=np.float64)
    t = int(np.abs(u).argmax())  # the first of equal maxima
    k = float(abs(u[t]))
    return t + 1, min(1.0, 2 * math.exp(-6 * k * k / (n**3 + n**2)))


def coefficient_of_variation(series: Floats) -> float:
    """Population standard deviation over |mean|; 0 for fewer than two values or a zero
    mean, as the method defines it."""
    mean = float(series.mean()) if len(series) else 0.0
    if len(series) < 2 or mean == 0:
        return 0.0
    return float(series.std()) / abs(mean)


@dataclass
class _Passes:
    """Every super-pass after the warm-up: each tracked metric, its requests (indices into
    the run's requests, completed first, then the unfinished), and its TPOT mean."""

    series: dict[str, Floats]  # NaN where the super-pass measured nothing
    members: list[Ints]
    tpot_sum: Floats  # Σ TPOT samples of the super-pass, ms
    tpot_n: Ints

    def __len__(self) -> int:
        return len(self.members)

    def tpot_mean(self, lo: int, hi: int) -> float:
        n = int(self.tpot_n[lo:hi].sum())
        return float(self.tpot_sum[lo:hi].sum()) / n if n else 0.0


def issue_order(t: Timings) -> Ints:
    """The run's requests (completed ones by index, then the unfinished ones after them)
    in issue order; ties in issue time broken by the requests' own values, so that the
    order the events came in decides nothing."""
    m = len(t.issued)
    issued = np.concatenate([t.issued, t.unfinished])
    pad = np.full(len(t.unfinished), -1, dtype=np.int64)
    keys = [np.concatenate([a, pad]) for a in (t.tokens, t.after, t.done, t.first)]
    finished = np.concatenate([np.ones(m, np.int64), np.zeros(len(t.unfinished), np.int64)])
    return np.lexsort((*keys, finished, issued)).astype(np.int64)


def samples(t: Timings) -> tuple[Floats, Floats]:
    """Per completed request, the method's TTFT and TPOT samples in ms (NaN: none): TTFT
    for every request with a first chunk, TPOT for those with tokens after it."""
    has_first = t.first >= 0
    ttft = np.where(has_first, (t.first - t.issued) / 1e6, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        tpot = np.where(has_first & (t.after > 0), (t.done - t.first) / t.after / 1e6, np.nan)
    return ttft, tpot


def _passes(t: Timings, order: Ints, method: Method) -> _Passes:
    ttft, tpot = samples(t)
    m, size = len(t.issued), method.super_pass_size
    series: dict[str, list[float]] = {name: [] for name in TRACKED}
    members, tpot_sum, tpot_n = [], [], []
    for start in range(method.warmup * size, len(order), size):
        idx = order[start : start + size]
        members.append(idx)
        done = idx[idx < m]
        for name, values in (("ttft", ttft[done]), ("tpot", tpot[done])):
            values = np.sort(values[np.isfinite(values)])
            for q in (50, 90, 95, 99):
                value = float(percentile_lower(values, q)) if len(values) else math.nan
                series[f"{name}_p{q}"].append(value)
            if name == "tpot":
                tpot_sum.append(float(values.sum()))
                tpot_n.append(len(values))
    return _Passes(
        {k: np.array(v, dtype=np.float64) for k, v in series.items()},
        members,
        np.array(tpot_sum, dtype=np.float64),
        np.array(tpot_n, dtype=np.int64),
    )


def _admissible(passes: _Passes, lo: int, hi: int, method: Method) -> bool:
    if hi - lo < method.min_trend_n:
        return False
    for name in GATED:
        window = passes.series[name][lo:hi]
        if not np.all(np.isfinite(window)):
            return False  # a super-pass that measured nothing
        trend = mann_kendall(window, method.alpha)
        if trend.direction != 0 or not trend.sufficient:
            return False
        if coefficient_of_variation(window) > method.cov_bound:
            return False
    return True


def plateaus(passes: _Passes, method: Method) -> list[tuple[int, int]]:
    """Every plateau ``[lo, hi)`` (post-warm-up super-pass indices), left to right."""
    found = []
    lo, n = 0, len(passes)
    while lo + method.min_trend_n <= n:
        hi = None
        for end in range(lo + method.min_trend_n, n + 1):
            if not _admissible(passes, lo, end, method):
                break
            hi = end
        if hi is None:
            lo += 1
        else:
            found.append((lo, hi))
            lo = hi
    return found


def _direction(series: Floats, method: Method) -> str:
    values = series[np.isfinite(series)]  # super-passes that measured nothing are skipped
    trend = mann_kendall(values, method.alpha)
    if not trend.sufficient:
        return "insufficient"
    return {1: "up", -1: "down"}.get(trend.direction, "steady")


def _state(series: Floats, method: Method) -> str:
    return {"up": UP, "down": DOWN}.get(_direction(series, method), PLATEAU)


def _anomaly(
    passes: _Passes, found: list[tuple[int, int]], method: Method
) -> dict[str, Any] | None:
    if len(found) < 2:
        return None
    base = passes.tpot_mean(*found[0])
    if base <= 0:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(passes.tpot_n > 0, passes.tpot_sum / np.maximum(passes.tpot_n, 1), 0.0)
    at, p = pettitt(means)
    if p >= method.alpha:
        return None
    for lo, hi in found[1:]:
        delta = 100 * (passes.tpot_mean(lo, hi) - base) / base
        if abs(delta) > method.shift_pct:
            return {
                "detected": True,
                "change_point_sp": at + method.warmup,
                "delta_pct": round(delta, 2),
                "pettitt_p": round(p, 6),
                "plateaus": [[a + method.warmup, b - 1 + method.warmup] for a, b in found],
            }
    return None


def analyse_steady_state(t: Timings, method: Method) -> dict[str, Any]:
    """The point's steady-state document (module docstring), with the spec's names."""
    order = issue_order(t)
    n = len(order)
    size = max(method.super_pass_size, 1)
    total = -(-n // size)  # the trailing partial super-pass is one
    doc: dict[str, Any] = {
        "method": {**asdict(method), "gated": list(GATED), "test": "mann_kendall_hamed_rao"},
        "notes": list(NOTES),
        "n_requests": n,
        "n_unfinished": len(t.unfinished),
        "n_super_passes": total,
        "warmup": method.warmup,
        "status": "partial_dataset",
        "verdict": "not found",
        "window": None,
        "state": {},
        "anomaly": None,
        "drifting_up": [],
        "global_trend": {},
        "plateaus": [],
        "metrics": None,
        "super_passes": {},
    }
    if n < size:
        doc["reason"] = f"{n} tracked requests: less than one super-pass of {size}"
        return doc
    passes = _passes(t, order, method)
    doc["super_passes"] = {k: [_round(v) for v in s] for k, s in passes.series.items()}
    doc["status"] = "insufficient_passes"
    found = plateaus(passes, method)
    doc["plateaus"] = [[lo + method.warmup, hi - 1 + method.warmup] for lo, hi in found]
    if len(passes):  # where the first super-pass after the warm-up starts
        doc["warmup_end_s"] = _window(t, order, method.warmup, method.warmup, size)["start_s"]
    doc["anomaly"] = _anomaly(passes, found, method)
    tail_from = found[0][0] if found else 0
    doc["global_trend"] = {
        name: _direction(passes.series[name][tail_from:], method) for name in GATED
    }
    doc["drifting_up"] = [name for name, d in doc["global_trend"].items() if d == "up"]
    if not found:
        doc["reason"] = (
            f"no {method.min_trend_n} consecutive super-passes after the warm-up are steady"
            if len(passes) >= method.min_trend_n
            else f"{len(passes)} super-passes after the warm-up: fewer than {method.min_trend_n}"
        )
        return doc
    lo, hi = found[0]
    window = _window(t, order, lo + method.warmup, hi - 1 + method.warmup, size)
    doc["metrics"] = window.pop("metrics")
    doc["window"] = window
    doc["state"] = {name: _state(passes.series[name][lo:hi], method) for name in TRACKED}
    doc["status"] = (
        "windowable" if window["duration_s"] >= method.min_duration_s else "insufficient_duration"
    )
    doc["verdict"] = _verdict(passes, doc, method)
    return doc


def _verdict(passes: _Passes, doc: dict[str, Any], method: Method) -> str:
    """§2.4 from the method's flags. A step up rises from the plateau's start to the end
    as a ramp does: it is the anomaly when nothing rises after the change point, and a
    drift when the climb goes on past it."""
    anomaly = doc["anomaly"]
    if anomaly and doc["drifting_up"]:
        after = anomaly["change_point_sp"] - method.warmup
        still = [n for n in GATED if _direction(passes.series[n][after:], method) == "up"]
        return "drifting_up" if still else "anomaly"
    return "anomaly" if anomaly else "drifting_up" if doc["drifting_up"] else "STEADY STATE"


def window_text(w: dict[str, Any]) -> str:
    """A window in words, as the CLI, the report and the portal's findings say it; a
    declared one may lack fields or hold them as text, so each is shown as it is."""
    duration = w.get("duration_s")
    span = f"{duration:,.1f}" if isinstance(duration, int | float) else str(duration)
    return (
        f"super-passes {w.get('super_pass_start')}–{w.get('super_pass_end')} of "
        f"{w.get('super_pass_size')} requests each ({w.get('n_samples')} samples, {span} s)"
    )


def declared_window(t: Timings, start: int, end: int, size: int) -> dict[str, Any] | None:
    """What the requests of super-passes ``start``–``end`` (inclusive, from 0; the last
    one may be the partial one) hold: their count, failures, issue-time span and metrics;
    None when the run has no such super-passes."""
    n = len(t.issued) + len(t.unfinished)
    if size < 1 or start < 0 or end < start or end * size >= n:
        return None
    return _window(t, issue_order(t), start, end, size)


def window_issue_span(t: Timings, window: dict[str, Any]) -> tuple[int, int]:
    """The first and last issue time (ns, the run's clock) of a window's requests."""
    size = window["super_pass_size"]
    members = issue_order(t)[
        window["super_pass_start"] * size : (window["super_pass_end"] + 1) * size
    ]
    issued = np.concatenate([t.issued, t.unfinished])[members]
    return int(issued.min()), int(issued.max())


def _window(t: Timings, order: Ints, start: int, end: int, size: int) -> dict[str, Any]:
    members = order[start * size : (end + 1) * size]
    m = len(t.issued)
    issued = np.concatenate([t.issued, t.unfinished])
    done = members[members < m]
    origin = int(issued.min())
    first, last = int(issued[members].min()), int(issued[members].max())
    duration = (last - first) / 1e9
    return {
        "super_pass_start": start,
        "super_pass_end": end,
        "super_pass_size": size,
        "n_samples": int((~t.failed[done]).sum()),
        "n_failed": int(t.failed[done].sum()),
        "n_unfinished": int(len(members) - len(done)),
        "duration_s": round(duration, 3),
        "start_s": round((first - origin) / 1e9, 3),
        "end_s": round((last - origin) / 1e9, 3),
        "metrics": window_metrics(t, done, duration),
    }


def window_metrics(t: Timings, members: Ints, duration_s: float) -> dict[str, Any]:
    """The point's metrics over the window's completed requests (rules §1.1): TTFT and
    TPOT percentiles in ms of the successful ones, system tokens/s over the issue-time
    span, tokens/s per user."""
    ok = members[~t.failed[members] & (t.first[members] >= 0)]
    ttft = (t.first[ok] - t.issued[ok]) / 1e6
    with np.errstate(divide="ignore", invalid="ignore"):
        tpot = np.where(t.after[ok] > 0, (t.done[ok] - t.first[ok]) / t.after[ok] / 1e6, np.nan)
    tpot = tpot[tpot > 0]  # rules §1.1: positive and finite samples only
    out: dict[str, Any] = {}
    for name, values in (("ttft", ttft), ("tpot", tpot)):
        values = np.sort(values[np.isfinite(values)])
        for q in (50, 90, 95, 99):
            value = float(percentile_lower(values, q)) if len(values) else math.nan
            out[f"{name}_p{q}_ms"] = _round(value)
    tokens = int(t.tokens[members[~t.failed[members]]].sum())
    out["output_tokens"] = tokens
    out["system_tps"] = _round(tokens / duration_s) if duration_s > 0 else None
    p90 = out["tpot_p90_ms"]
    out["tps_per_user"] = _round(1000 / p90) if p90 else None
    return out


def _round(value: float) -> float | None:
    return None if not math.isfinite(value) else round(float(value), 4)
