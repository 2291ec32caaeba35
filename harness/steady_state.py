"""Steady state of a fixed-concurrency point, from its requests (rules §2, R §4.4).

The official metrics of a v1.0 point come from a detected steady-state window. The method
follows the official client's post-hoc diagnostics (rules §2.6); this is our own
implementation of it, and where we had to choose, the choice is named here and in the
document's ``method``:

- Requests are taken in issue order and cut into **super-passes** of ``super_pass_size``
  (one pass over the dataset); a trailing partial super-pass is not one. The first
  ``warmup`` super-passes (default 1, as the diagnostics' ``--warmup 1``) are dropped.
- Per super-pass, the official ``lower`` percentile of TTFT (issue → first chunk) and TPOT
  ((complete − first chunk) / tokens after it, valid samples only) over its successful
  requests. Failed requests keep their place in the issue order but measure nothing.
- **Gated metrics**: TTFT and TPOT at P50 and **P95**, as the diagnostics gate; R §4.4's
  table names P90 (the docs' item B8). P90 and P99 get a state too, for comparison with a
  declared block that names them, but never decide the window.
- A window of super-passes is *admissible* when no gated metric drifts and each one's
  coefficient of variation (sample standard deviation over the mean) is at most
  ``cov_bound`` (the loosest of the diagnostics' bounds). A metric *drifts* when
  Mann–Kendall with the Hamed–Rao autocorrelation correction finds a trend at ``alpha``
  and the least-squares line moves at least ``min_relative_drift`` (5 %) of the median
  end to end: the official design's effect-size floor, without which a long steady run
  is cut into short plateaus by trends too small to matter.
- **Plateaus** grow from the left: the first admissible window of ``MIN_TREND_N``
  super-passes grows while it stays admissible; the next search starts where it broke.
  The reported plateau is the first one whose issue-time span reaches the §6.2 minimum
  (earlier, shorter ones are counted in ``skipped_short``), else the first one.
- **Anomaly** (a level shift): a later plateau whose mean TPOT P50 differs from the
  reported one's by more than ``shift_pct`` and a significant Pettitt change point in TPOT
  P50 after the window's start.
- **Drift**: a gated metric that drifts (as above) over the super-passes after the window,
  or after the change point when there is a level shift (at least ``MIN_TREND_N`` of
  them): it "keeps climbing after the window". A step to a flat later plateau is an
  anomaly, not drift; a slow climb (or fall) cut into short plateaus by the CoV bound is
  drift. The design keeps this test significance-only; we keep the effect-size floor here
  too, so that a healthy run is not called drifting for a 1 % slope. The diagnostics
  report only drifting up; drifting down is derived the same way, for the rules' verdict.
- ``status`` (§2.3) from the window's extent and span; ``verdict`` (§2.4):
  ``drifting_up``, else ``drifting_down``, else ``anomaly``, else ``STEADY STATE``;
  ``not found`` when no plateau exists. ``state`` is each metric's trend inside the
  reported window (Plateau on every gated metric, by construction); the tail's drift is
  in the verdict and in ``drifting_up`` / ``drifting_down``, so a drifting run stays
  consistent with the checker's ``steady-state-consistency``.

Super-passes are numbered from 0 over the whole run, the warm-up ones included, with an
inclusive end, as ``point.yaml`` numbers them (the diagnostics' ``sp_lo + warmup .. sp_hi
+ warmup − 1``). Times are seconds from the first tracked issue, the time series' origin.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from .metrics import percentile_lower
from .timings import Timings

MIN_TREND_N = 4
STATUSES = ("windowable", "insufficient_duration", "insufficient_passes", "partial_dataset")
VERDICTS = ("STEADY STATE", "drifting_up", "drifting_down", "anomaly", "not found")
PLATEAU, UP, DOWN = "Plateau", "Drifting Up", "Drifting Down"
GATED = ("ttft_p50", "ttft_p95", "tpot_p50", "tpot_p95")
TRACKED = ("ttft_p50", "ttft_p90", "ttft_p95", "ttft_p99",
           "tpot_p50", "tpot_p90", "tpot_p95", "tpot_p99")  # fmt: skip
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Method:
    """The detector's settings; every one is written into the document it produces."""

    super_pass_size: int
    warmup: int = 1
    alpha: float = 0.05
    cov_bound: float = 0.08
    min_trend_n: int = MIN_TREND_N
    shift_pct: float = 5.0
    min_relative_drift: float = 0.05
    min_duration_s: float = 0.0  # the §6.2 minimum for the point's region


@dataclass(frozen=True)
class Trend:
    direction: int  # +1 rising, −1 falling, 0 no significant trend
    z: float
    p: float


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))


def sens_slope(series: Floats) -> float:
    n = len(series)
    i, j = np.triu_indices(n, k=1)
    return float(np.median((series[j] - series[i]) / (j - i))) if n > 1 else 0.0


def mann_kendall(series: Floats, alpha: float = 0.05) -> Trend:
    """Mann–Kendall trend test with the Hamed–Rao (1998) variance correction for serially
    correlated series: the variance of S is scaled by the effective-sample-size ratio from
    the significant autocorrelations of the ranks of the Sen-detrended series."""
    x = np.asarray(series, dtype=np.float64)
    n = len(x)
    if n < 3 or not np.all(np.isfinite(x)):
        return Trend(0, 0.0, 1.0)
    i, j = np.triu_indices(n, k=1)
    s = float(np.sign(x[j] - x[i]).sum())
    _, ties = np.unique(x, return_counts=True)
    var_s = (n * (n - 1) * (2 * n + 5) - float((ties * (ties - 1) * (2 * ties + 5)).sum())) / 18
    if var_s <= 0:
        return Trend(0, 0.0, 1.0)
    ranks = _average_ranks(x - sens_slope(x) * np.arange(n))
    centred = ranks - ranks.mean()
    denominator = float((centred * centred).sum())
    bound = _z_two_sided(alpha) / math.sqrt(n)
    ratio = 1.0
    if denominator > 0:
        # Every lag's autocorrelation at once; lags 1 … n−3 (the weights vanish beyond).
        r = np.correlate(centred, centred, "full")[n : 2 * n - 3] / denominator
        k = np.arange(1, n - 2, dtype=np.float64)
        weights = (n - k) * (n - k - 1) * (n - k - 2) / (n * (n - 1) * (n - 2))
        significant = np.abs(r) > bound
        ratio += 2 * float((weights * r)[significant].sum())
    var_s *= ratio if ratio > 0 else 1.0
    z = (s - math.copysign(1, s)) / math.sqrt(var_s) if s else 0.0
    p = 2 * _normal_sf(abs(z))
    return Trend(int(np.sign(z)) if p < alpha else 0, z, p)


def _average_ranks(x: Floats) -> Floats:
    """Ranks from 0, ties sharing their mean rank (a perfectly linear series detrends to a
    constant: every rank equal, no autocorrelation)."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (starts + (counts - 1) / 2)[inverse].astype(np.float64)


@cache
def _z_two_sided(alpha: float) -> float:
    # The normal quantile by bisection: no scipy for one number.
    lo, hi = 0.0, 10.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 2 * _normal_sf(mid) > alpha else (lo, mid)
    return (lo + hi) / 2


def pettitt(series: Floats) -> tuple[int, float]:
    """Pettitt's change-point test: the index where the second level starts and the
    approximate p-value ``2·exp(−6K²/(n³+n²))``."""
    x = np.asarray(series, dtype=np.float64)
    n = len(x)
    if n < 2:
        return 0, 1.0
    signs = np.sign(x[None, :] - x[:, None])  # signs[i, j] = sign(x_j − x_i)
    # U_t = Σ_{i≤t} Σ_{j>t} sign(x_j − x_i), for t = 0 … n−2.
    u = np.array([signs[: t + 1, t + 1 :].sum() for t in range(n - 1)], dtype=np.float64)
    t = int(np.abs(u).argmax())
    k = float(abs(u[t]))
    return t + 1, min(1.0, 2 * math.exp(-6 * k * k / (n**3 + n**2)))


def _cov(series: Floats) -> float:
    mean = float(series.mean())
    if len(series) < 2 or mean == 0:
        return math.inf if mean == 0 else 0.0
    return float(series.std(ddof=1)) / abs(mean)


@dataclass
class _Passes:
    """Per super-pass after the warm-up: each tracked metric, the requests' index range,
    and the issue-time span."""

    series: dict[str, Floats]
    bounds: list[tuple[int, int]]  # [first, last) request index in issue order

    def __len__(self) -> int:
        return len(self.bounds)


def _passes(t: Timings, order: npt.NDArray[np.int64], method: Method, total: int) -> _Passes:
    ttft, tpot = _per_request(t)
    size = method.super_pass_size
    series: dict[str, list[float]] = {name: [] for name in TRACKED}
    bounds = []
    for sp in range(method.warmup, total):
        idx = order[sp * size : (sp + 1) * size]
        bounds.append((sp * size, (sp + 1) * size))
        for name, values in (("ttft", ttft[idx]), ("tpot", tpot[idx])):
            values = np.sort(values[np.isfinite(values)])
            for q in (50, 90, 95, 99):
                series[f"{name}_p{q}"].append(
                    float(percentile_lower(values, q)) if len(values) else math.nan
                )
    return _Passes({k: np.array(v, dtype=np.float64) for k, v in series.items()}, bounds)


def _per_request(t: Timings, members: npt.NDArray[np.int64] | None = None) -> tuple[Floats, Floats]:
    """TTFT and TPOT in ms per request (of *members* only, when given, in their order);
    NaN where the request measured nothing."""
    pick = slice(None) if members is None else members
    issued, first, done, after = t.issued[pick], t.first[pick], t.done[pick], t.after[pick]
    ok = ~t.failed[pick] & (first >= 0)
    ttft = np.where(ok, (first - issued) / 1e6, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        tpot = np.where(ok & (after > 0), (done - first) / after / 1e6, np.nan)
    tpot[~(tpot > 0)] = np.nan  # rules §1.1: positive and finite samples only
    return ttft, tpot


def _admissible(passes: _Passes, lo: int, hi: int, method: Method) -> bool:
    for name in GATED:
        window = passes.series[name][lo:hi]
        if not np.all(np.isfinite(window)) or _cov(window) > method.cov_bound:
            return False
        if _drift(window, method) != 0:
            return False
    return True


def relative_drift(series: Floats) -> float:
    """The least-squares line's change from the first super-pass to the last, over the
    median: how far the metric moved, whatever a test says about it."""
    n = len(series)
    median = float(np.median(series))
    if n < 2 or median == 0:
        return 0.0
    slope = float(np.polyfit(np.arange(n, dtype=np.float64), series, 1)[0])
    return slope * (n - 1) / abs(median)


def _drift(series: Floats, method: Method) -> int:
    """+1 or −1 when the series trends significantly *and* by at least
    ``min_relative_drift`` end to end; 0 otherwise."""
    if abs(relative_drift(series)) < method.min_relative_drift:
        return 0  # too small to matter, whatever the test says: no need to run it
    return mann_kendall(series, method.alpha).direction


def plateaus(passes: _Passes, method: Method) -> list[tuple[int, int]]:
    """Every plateau ``[lo, hi)`` (post-warm-up super-pass indices), left to right."""
    found = []
    lo, n, floor = 0, len(passes), method.min_trend_n
    while lo + floor <= n:
        if not _admissible(passes, lo, lo + floor, method):
            lo += 1
            continue
        hi = lo + floor
        while hi < n and _admissible(passes, lo, hi + 1, method):
            hi += 1
        found.append((lo, hi))
        lo = hi
    return found


def _state(direction: int) -> str:
    return {1: UP, -1: DOWN}.get(direction, PLATEAU)


def analyse_steady_state(t: Timings, method: Method) -> dict[str, Any]:
    """The point's steady-state document (module docstring), with the spec's names."""
    n = len(t.issued)
    order = np.argsort(t.issued, kind="stable")
    size = max(method.super_pass_size, 1)
    total = n // size
    doc: dict[str, Any] = {
        "method": {**asdict(method), "gated": list(GATED), "test": "mann_kendall_hamed_rao"},
        "n_requests": n,
        "n_super_passes": total,
        "warmup": method.warmup,
        "status": "partial_dataset",
        "verdict": "not found",
        "window": None,
        "state": {},
        "anomaly": None,
        "drifting_up": [],
        "drifting_down": [],
        "plateaus": [],
        "skipped_short": 0,
        "metrics": None,
        "super_passes": {},
    }
    if total < 1:
        doc["reason"] = f"{n} tracked requests: less than one super-pass of {size}"
        return doc
    passes = _passes(t, order, method, total)
    doc["super_passes"] = {k: [_round(v) for v in s] for k, s in passes.series.items()}
    doc["status"] = "insufficient_passes"
    found = plateaus(passes, method)
    doc["plateaus"] = [[lo + method.warmup, hi - 1 + method.warmup] for lo, hi in found]
    if total > method.warmup:  # where the first super-pass after the warm-up starts
        doc["warmup_end_s"] = _window(t, order, method.warmup, method.warmup, size)["start_s"]
    if not found:
        doc["reason"] = (
            f"no {method.min_trend_n} consecutive super-passes after the warm-up are steady"
            if len(passes) >= method.min_trend_n
            else f"{len(passes)} super-passes after the warm-up: fewer than {method.min_trend_n}"
        )
        return doc
    windows = [
        _window(t, order, lo + method.warmup, hi - 1 + method.warmup, size) for lo, hi in found
    ]
    long_enough = [i for i, w in enumerate(windows) if w["duration_s"] >= method.min_duration_s]
    chosen = long_enough[0] if long_enough else 0
    doc["skipped_short"] = chosen
    lo, hi = found[chosen]
    window = windows[chosen]
    duration = window["duration_s"]
    doc["metrics"] = window.pop("metrics")
    doc["window"] = window
    doc["state"] = {name: _state(_drift(passes.series[name][lo:hi], method)) for name in TRACKED}
    doc["anomaly"] = _anomaly(passes, found, chosen, method)
    # The tail is what follows the window, or the level shift when there is one: a step
    # to a flat later plateau is an anomaly, not a drift.
    after = hi
    if doc["anomaly"]:
        after = max(hi, doc["anomaly"]["change_point_sp"] - method.warmup)
    for name in GATED:
        tail = passes.series[name][after:]
        tail = tail[np.isfinite(tail)]
        direction = _drift(tail, method) if len(tail) >= method.min_trend_n else 0
        if direction > 0:
            doc["drifting_up"].append(name)
        elif direction < 0:
            doc["drifting_down"].append(name)
    covers = hi - lo >= method.min_trend_n
    doc["status"] = (
        "insufficient_passes"
        if not covers
        else "windowable"
        if duration >= method.min_duration_s
        else "insufficient_duration"
    )
    doc["verdict"] = (
        "drifting_up"
        if doc["drifting_up"]
        else "drifting_down"
        if doc["drifting_down"]
        else "anomaly"
        if doc["anomaly"]
        else "STEADY STATE"
    )
    return doc


def _anomaly(
    passes: _Passes, found: list[tuple[int, int]], chosen: int, method: Method
) -> dict[str, Any] | None:
    later = found[chosen + 1 :]
    if not later:
        return None
    tpot = passes.series["tpot_p50"]
    base_lo, base_hi = found[chosen]
    base = float(tpot[base_lo:base_hi].mean())
    deltas = [(100 * (float(tpot[lo:hi].mean()) - base) / base, lo, hi) for lo, hi in later]
    delta, _, _ = max(deltas, key=lambda d: abs(d[0]))
    if abs(delta) <= method.shift_pct:
        return None
    at, p = pettitt(tpot[base_lo:])
    if p >= method.alpha:
        return None
    return {
        "detected": True,
        "change_point_sp": base_lo + at + method.warmup,
        "delta_pct": round(delta, 2),
        "pettitt_p": round(p, 6),
        "plateaus": [[lo + method.warmup, hi - 1 + method.warmup] for lo, hi in found[chosen:]],
    }


def window_text(w: dict[str, Any]) -> str:
    """A window in words, as the CLI, the report and the portal's findings say it; a
    declared one may lack fields or hold them as text, so each is shown as it is."""
    duration = w.get("duration_s")
    span = f"{duration:,.1f}" if isinstance(duration, int | float) else str(duration)
    return (
        f"super-passes {w.get('super_pass_start')}–{w.get('super_pass_end')} of "
        f"{w.get('super_pass_size')} ({w.get('n_samples')} samples, {span} s)"
    )


def declared_window(t: Timings, start: int, end: int, size: int) -> dict[str, Any] | None:
    """What the requests of super-passes ``start``–``end`` (inclusive, from 0) hold: their
    count, failures, issue-time span and metrics; None when the run has no such
    super-passes."""
    if size < 1 or start < 0 or end < start or (end + 1) * size > len(t.issued):
        return None
    return _window(t, np.argsort(t.issued, kind="stable"), start, end, size)


def _window(
    t: Timings, order: npt.NDArray[np.int64], start: int, end: int, size: int
) -> dict[str, Any]:
    members = order[start * size : (end + 1) * size]
    origin = int(t.issued.min())
    first, last = int(t.issued[members].min()), int(t.issued[members].max())
    duration = (last - first) / 1e9
    return {
        "super_pass_start": start,
        "super_pass_end": end,
        "super_pass_size": size,
        "n_samples": int((~t.failed[members]).sum()),
        "n_failed": int(t.failed[members].sum()),
        "duration_s": round(duration, 3),
        "start_s": round((first - origin) / 1e9, 3),
        "end_s": round((last - origin) / 1e9, 3),
        "metrics": window_metrics(t, members, duration),
    }


def window_metrics(t: Timings, members: npt.NDArray[np.int64], duration_s: float) -> dict[str, Any]:
    """The point's metrics over the window's requests (rules §1.1): TTFT and TPOT
    percentiles in ms, system tokens/s over the issue-time span, tokens/s per user."""
    # Only the window's own requests: a run has several windows to describe.
    ttft, tpot = _per_request(t, members)
    out: dict[str, Any] = {}
    for name, values in (("ttft", ttft), ("tpot", tpot)):
        values = np.sort(values[np.isfinite(values)])
        for q in (50, 90, 95, 99):
            value = float(percentile_lower(values, q)) if len(values) else math.nan
            out[f"{name}_p{q}_ms"] = _round(value)
    ok = members[~t.failed[members]]
    tokens = int(t.tokens[ok].sum())
    out["output_tokens"] = tokens
    out["system_tps"] = _round(tokens / duration_s) if duration_s > 0 else None
    p90 = out["tpot_p90_ms"]
    out["tps_per_user"] = _round(1000 / p90) if p90 else None
    return out


def _round(value: float) -> float | None:
    return None if not math.isfinite(value) else round(float(value), 4)
