"""Is the steady state a point declares the one its events show? (rules §2, R §4.4)

The events are analysed as the official diagnostics analyse them (harness/analysis/steady_state.py)
and set beside the ``steady_state`` block of ``point.yaml``, which submitters fill by hand:
the status, verdict, window and per-metric state the events show against what is declared
(a reviewer's judgement where they differ: another detector's settings can differ too);
the declared window's own sample count and issue-time span, which are facts of the events
whatever the detector; and, for a windowable point, whether the summary's numbers are the
window's or the whole run's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.checks.domain.datasets import pass_size
from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule
from app.runs.domain.retokenize import Recount, Reported
from harness.analysis.steady_state import Method, analyse_steady_state, declared_window, window_text
from harness.metrics.timings import Timings

DECLARED_WINDOW = ("super_pass_start", "super_pass_end", "super_pass_size")


@dataclass
class SteadyStateReview:
    # The analysis (harness/analysis/steady_state.py) with "declared" (the point.yaml block) and
    # "declared_window" (what the events hold for it); None: not analysed ("reason" says).
    document: dict[str, Any] | None
    findings: list[Finding]


def _finding(
    rule: str, severity: Severity, message: str, point: str, fix: str | None = None
) -> Finding:
    return portal_rule(rule).finding(severity, message, point=point, fix=fix)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class SuperPass:
    """How many requests make one super-pass of a benchmark, and on what that rests."""

    size: int
    basis: str


def benchmark_super_pass(
    dataset: str | None, defined: Mapping[str, tuple[int, str]]
) -> SuperPass | None:
    """Rules §2.1: one pass over the dataset, unless the benchmark definition sets another
    size. *defined* maps a dataset to the operator's size and its source; None when the
    portal knows neither (the point's own declaration is then all there is)."""
    if dataset and dataset in defined:
        size, source = defined[dataset]
        return SuperPass(size, f"the benchmark definition for {dataset} ({source})")
    one_pass = pass_size(dataset)
    return SuperPass(one_pass, f"one pass over {dataset}") if one_pass else None


def super_pass_size(point_yaml: dict[str, Any] | None) -> int | None:
    """The super-pass point.yaml declares: its window's size, else the point's
    ``min_sample_count`` (one pass over the dataset, rules §6.4)."""
    block = (point_yaml or {}).get("steady_state")
    window = block.get("window") if isinstance(block, dict) else None
    size = _int(window.get("super_pass_size")) if isinstance(window, dict) else None
    if size is None:
        runtime = (point_yaml or {}).get("runtime_settings")
        size = _int(runtime.get("min_sample_count")) if isinstance(runtime, dict) else None
    return size if size is not None and size > 0 else None


def steady_state_not_analysed(point: str, reason: str) -> Finding:
    """A fixed-concurrency point whose events could not be analysed, and why: said, never
    a silent skip."""
    return _finding("steady-state-detected", Severity.INFO, f"Not analysed: {reason}", point)


def review_steady_state(
    point: str,
    timings: Timings,
    point_yaml: dict[str, Any] | None,
    reported: Reported,
    recount: Recount,
    *,
    benchmark: SuperPass | None,
    minimum_s: float,
    tolerance: float,
) -> SteadyStateReview:
    """Analyse one fixed-concurrency point's requests and compare with its declaration;
    *benchmark* is the benchmark's super-pass (None: the portal knows no size for the
    dataset), *minimum_s* §6.2's minimum for the point, *tolerance* the timing tolerance."""
    declared_size = super_pass_size(point_yaml)
    if benchmark is not None:
        size, basis = benchmark.size, benchmark.basis
    elif declared_size is not None:
        size, basis = (
            declared_size,
            "as point.yaml states: the portal knows no size for its dataset",
        )
    else:
        reason = (
            "the portal knows no super-pass size for the point's dataset and point.yaml "
            "states none (steady_state.window.super_pass_size or "
            "runtime_settings.min_sample_count), so the events were not analysed"
        )
        return SteadyStateReview(None, [steady_state_not_analysed(point, reason)])
    doc = analyse_steady_state(timings, Method(super_pass_size=size, min_duration_s=minimum_s))
    doc["super_pass_basis"] = basis
    block = (point_yaml or {}).get("steady_state")
    declared = block if isinstance(block, dict) and block else None
    doc["declared"] = declared
    findings = [_detected(point, doc, minimum_s, declared is not None)]
    if benchmark is not None and declared_size is not None and declared_size != size:
        findings.append(
            _finding(
                "steady-state-super-pass",
                Severity.WARNING,
                f"point.yaml's super-passes are {declared_size:,} requests; {basis} is "
                f"{size:,}, and the events were analysed with super-passes of {size:,}",
                point,
                fix=portal_rule("steady-state-super-pass").fix,
            )
        )
    if declared is not None:
        findings += _compare_declared(point, doc, declared)
        facts, fact_findings = _declared_window(point, timings, declared, tolerance)
        doc["declared_window"] = facts
        findings += fact_findings
        if declared.get("status") == "windowable" and facts is not None:
            findings += _basis(point, facts["metrics"], reported, recount, tolerance)
    if not any(f.rule == "steady-state-window-metrics" for f in findings):
        if doc["status"] == "windowable" and doc.get("metrics"):
            # The events say windowable whatever the block says: the window's numbers
            # are the official ones (§2.3).
            findings += _basis(point, doc["metrics"], reported, recount, tolerance)
    return SteadyStateReview(doc, findings)


def _detected(point: str, doc: dict[str, Any], minimum_s: float, declared: bool) -> Finding:
    text = f"The events show {doc['status']}, {doc['verdict']}"
    window = doc.get("window")
    if window:
        text += f": {window_text(window)}; the §6.2 minimum is {minimum_s:,.0f} s"
    if doc.get("super_pass_basis"):
        text += f"; super-pass size: {doc['super_pass_basis']}"
    if doc.get("reason"):
        text += f": {doc['reason']}"
    if doc.get("anomaly"):
        a = doc["anomaly"]
        text += f"; a level shift at super-pass {a['change_point_sp']}, TPOT {a['delta_pct']:+.1f}%"
    if doc.get("drifting_up"):
        text += f"; rising from the window's start to the end: {', '.join(doc['drifting_up'])}"
    if not declared:
        text += "; point.yaml declares no steady_state block"
    return _finding("steady-state-detected", Severity.INFO, text, point)


def _compare_declared(point: str, doc: dict[str, Any], declared: dict[str, Any]) -> list[Finding]:
    differences = []
    for key in ("status", "verdict"):
        if declared.get(key) is not None and declared.get(key) != doc[key]:
            differences.append(f"{key}: declared {declared[key]!r}, the events show {doc[key]!r}")
    window, ours = declared.get("window"), doc.get("window")
    if isinstance(window, dict) and any(window.get(k) is not None for k in DECLARED_WINDOW):
        if ours is None:
            differences.append(
                f"window: declared {window_text(window)}, the events show none"
                + (f" ({doc['reason']})" if doc.get("reason") else "")
            )
        elif any(
            window.get(k) is not None and window.get(k) != ours[k]
            for k in ("super_pass_start", "super_pass_end")
        ):
            differences.append(
                f"window: declared {window_text(window)}, the events show {window_text(ours)}"
            )
    states = declared.get("state")
    if isinstance(states, dict) and doc.get("state"):
        for metric, state in sorted(states.items()):
            found = doc["state"].get(metric)
            if found is not None and state != found:
                differences.append(f"{metric}: declared {state!r}, the events show {found!r}")
    if not differences:
        return [
            _finding(
                "steady-state-declared",
                Severity.INFO,
                "The declared steady_state block agrees with the events "
                f"({doc['status']}, {doc['verdict']})",
                point,
            )
        ]
    fix = portal_rule("steady-state-declared").fix
    return [
        _finding("steady-state-declared", Severity.WARNING, text, point, fix=fix)
        for text in differences
    ]


def _declared_window(
    point: str, timings: Timings, declared: dict[str, Any], tolerance: float
) -> tuple[dict[str, Any] | None, list[Finding]]:
    window = declared.get("window")
    if not isinstance(window, dict):
        return None, []
    start, end, size = (_int(window.get(k)) for k in DECLARED_WINDOW)
    if start is None or end is None or size is None:
        return None, []
    facts = declared_window(timings, start, end, size)
    fix = portal_rule("steady-state-window-facts").fix
    if facts is None:
        have = len(timings.issued) // size if size > 0 else 0
        return None, [
            _finding(
                "steady-state-window-facts",
                Severity.ERROR,
                f"The declared window, super-passes {start}–{end} of {size} requests each, "
                f"is not in the events: they hold {len(timings.issued):,} tracked requests, {have} "
                "super-passes (numbered from 0)",
                point,
                fix=fix,
            )
        ]
    problems: list[str] = []
    agreed: list[str] = []
    n_declared = _int(window.get("n_samples"))
    if n_declared is not None:
        # Completed queries: the successful ones, or every one when failures count.
        counts = (facts["n_samples"], facts["n_samples"] + facts["n_failed"])
        text = f"n_samples: declared {n_declared:,}, in those super-passes {facts['n_samples']:,}"
        (agreed if n_declared in counts else problems).append(text)
    duration = window.get("duration_s")
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        ours = facts["duration_s"]
        diff = (duration - ours) / ours if ours else float("inf")
        text = f"duration_s: declared {duration:,.3f} s, their issue-time span {ours:,.3f} s"
        (agreed if abs(diff) <= tolerance else problems).append(f"{text} ({diff:+.2%})")
    if problems:
        return facts, [
            _finding(
                "steady-state-window-facts",
                Severity.ERROR,
                f"Super-passes {start}–{end} of {size} requests each: "
                + "; ".join(problems + agreed),
                point,
                fix=fix,
            )
        ]
    if not agreed:
        return facts, []
    return facts, [
        _finding(
            "steady-state-window-facts",
            Severity.INFO,
            f"Super-passes {start}–{end} of {size} requests each: " + "; ".join(agreed),
            point,
        )
    ]


def _near(a: float | None, b: float | None, tolerance: float) -> bool:
    return a is not None and b is not None and abs(a - b) <= tolerance * max(abs(b), 1e-9)


def _basis(
    point: str, window: dict[str, Any], reported: Reported, recount: Recount, tolerance: float
) -> list[Finding]:
    """The summary's numbers against the window's (*window*: its metrics) and the whole
    run's: a windowable point's official numbers are the window's (§2.3)."""
    whole_tps = (
        recount.total_output_tokens / (recount.events_duration_ms / 1000)
        if recount.total_output_tokens is not None and recount.events_duration_ms
        else None
    )
    rows = (
        (
            "TTFT P90",
            reported.ttft_p90_ms,
            window.get("ttft_p90_ms"),
            (recount.ttft_p90_ms,),
            " ms",
        ),
        (
            "TPOT P90",
            reported.tpot_p90_ms,
            window.get("tpot_p90_ms"),
            (recount.tpot_p90_ms, recount.tpot_p90_ms_official),
            " ms",
        ),
        ("system tokens/s", reported.system_tps, window.get("system_tps"), (whole_tps,), ""),
    )
    unsupported, whole_run, lines = [], [], []
    for label, theirs, ours, whole, unit in rows:
        if theirs is None or ours is None:
            continue
        basis = (
            "the window's"
            if _near(theirs, ours, tolerance)
            else "the whole run's"
            if any(_near(theirs, w, tolerance) for w in whole)
            else None
        )
        line = f"{label}: reported {theirs:,.3f}{unit}, over the window {ours:,.3f}{unit}"
        if whole[0] is not None:
            line += f", over the whole run {whole[0]:,.3f}{unit}"
        lines.append(line + (f" ({basis})" if basis else ""))
        if basis is None:
            unsupported.append(label)
        elif basis == "the whole run's":
            whole_run.append(label)
    if not lines:
        return []
    fix = portal_rule("steady-state-window-metrics").fix
    if whole_run and not unsupported:
        return [
            _finding(
                "steady-state-window-metrics",
                Severity.WARNING,
                f"{', '.join(whole_run)} of the summary are the whole run's, while the point is "
                "windowable: its official numbers are the window's (§2.3): " + "; ".join(lines),
                point,
                fix=fix,
            )
        ]
    if unsupported:
        return [
            _finding(
                "steady-state-window-metrics",
                Severity.WARNING,
                f"{', '.join(unsupported)} of the summary are neither the declared window's nor "
                f"the whole run's (tolerance {tolerance:.0%}): " + "; ".join(lines),
                point,
                fix=fix,
            )
        ]
    return [_finding("steady-state-window-metrics", Severity.INFO, "; ".join(lines), point)]
