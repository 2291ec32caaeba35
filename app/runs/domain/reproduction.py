"""Judging a reproduction run against the submitted point (rules §11.4).

A reproduced throughput metric that falls short of the submitted value by more than the
reproducibility margin (10 % for an independent re-run, 5 % on the same system; both
configurable) is a finding for the reviewers. On an agentic point the per-user metric is
``e2e_avg_interactivity``.
A reproduction that measured more is not a problem, but one beyond the margin on the high
side is said to be beyond it, not "within" it. A run shorter than the point's §6.2
minimum duration does not count as evidence either way, whatever it measured. The run is
an unverified result of its own; it never changes the submitted numbers.

Latency is compared too, as evidence beside the verdict and never as one (§11.4: a
reproducibility objection may not rest on latency alone): TTFT and TPOT at P50, P90 and
P99 against a band around the submitted values, and the distance between the two runs'
histograms (``harness.metrics.definitions.histogram_distance``), with the band and the largest
distance in settings.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule
from harness.metrics.definitions import histogram_distance, percentile_key

RULE = portal_rule("reproduction-margin")
LATENCY_RULE = portal_rule("reproduction-latency")


def compared_metrics(agentic: bool) -> tuple[tuple[str, str], ...]:
    """The throughput metrics a reproduction is judged on (rules §11.4)."""
    per_user = "e2e avg interactivity" if agentic else "tokens/s per user"
    return (("system_tps", "system tokens/s"), ("tps_per_user", per_user))


@dataclass(frozen=True)
class Measured:
    system_tps: float | None
    tps_per_user: float | None


def judge_reproduction(
    submitted: Measured,
    reproduced: Measured,
    margin: float,
    point: str,
    *,
    duration_s: float | None = None,
    min_duration_s: float | None = None,
    agentic: bool = False,
    same_system: bool = False,
) -> Finding:
    """The verdict on one reproduction: which metric misses, which way and by how much;
    *duration_s* (the run's issue-time span, the drain left out) below *min_duration_s*
    makes it no evidence."""
    shortfalls: list[str] = []
    above: list[str] = []
    compared: list[str] = []
    missing: list[str] = []
    for key, label in compared_metrics(agentic):
        want, got = getattr(submitted, key), getattr(reproduced, key)
        if want is None or got is None or want <= 0:
            missing.append(label)
            continue
        ratio = got / want
        compared.append(f"{label} {got:.2f} vs {want:.2f} ({(ratio - 1) * 100:+.1f}%)")
        if ratio < 1 - margin:
            shortfalls.append(f"{label} by {(1 - ratio) * 100:.1f}%")
        elif ratio > 1 + margin:
            above.append(f"{label} by {(ratio - 1) * 100:.1f}%")

    def finding(severity: Severity, message: str, fix: str | None = None) -> Finding:
        return RULE.finding(severity, message, point=point, fix=fix)

    detail = "; ".join(compared)
    basis = "same-system " if same_system else ""
    if duration_s is not None and min_duration_s and duration_s < min_duration_s:
        return finding(
            Severity.WARNING,
            f"Not evidence yet: the reproduction's issue-time span is {duration_s:,.0f} s, "
            f"and §6.2 asks {min_duration_s:,.0f} s at this {'agentic ' if agentic else ''}"
            "point before a run's numbers count" + (f"; it measured {detail}" if detail else ""),
            fix="Reproduce again with a time cap of at least the point's minimum duration",
        )
    if not compared:
        return finding(
            Severity.WARNING,
            f"The reproduction could not be compared: no {' or '.join(missing)} was measured",
            fix="Configure a reference tokenizer for the model so throughput can be counted",
        )
    if shortfalls:
        return finding(
            Severity.WARNING,
            f"Reproduced {', '.join(shortfalls)} short of the submitted value, more than "
            f"the {margin:.0%} {basis}margin: {detail}",
            fix="Check the endpoint, its configuration and load, then reproduce again; the "
            "submitter may be asked to explain the difference",
        )
    note = f" ({', '.join(missing)} not measured)" if missing else ""
    if above:
        return finding(
            Severity.INFO,
            f"Above the submitted value beyond the {margin:.0%} {basis}margin "
            f"({', '.join(above)}): "
            f"not a shortfall, but the endpoint no longer behaves as submitted: {detail}{note}",
        )
    return finding(Severity.INFO, f"Within the {margin:.0%} {basis}margin: {detail}{note}")


@dataclass(frozen=True)
class LatencyMethod:
    """How a reproduction's latency is set beside the submitted run's (settings)."""

    band: float = 0.10  # a percentile more than this above (or below) the submitted one
    max_distance: float = 0.15  # the largest histogram distance (Kolmogorov–Smirnov)
    percentiles: tuple[float, ...] = (50.0, 90.0, 99.0)


def compare_latency(
    submitted: dict[str, Any] | None,
    reproduced: dict[str, Any],
    method: LatencyMethod,
    point: str,
) -> tuple[Finding, dict[str, Any]]:
    """TTFT and TPOT of two summaries (their stat blocks, in ns): each percentile against
    the band, and the histograms' distance. The finding is evidence, never the verdict."""
    doc: dict[str, Any] = {"method": asdict(method), "metrics": {}}
    outside: list[str] = []
    lines: list[str] = []
    for metric, label in (("ttft", "TTFT"), ("tpot", "TPOT")):
        theirs = (submitted or {}).get(metric) or {}
        ours = reproduced.get(metric) or {}
        if not theirs.get("percentiles") or not ours.get("percentiles"):
            continue
        bands = []
        for p in method.percentiles:
            key = percentile_key(p)
            want, got = theirs["percentiles"].get(key), ours["percentiles"].get(key)
            if not want or got is None:
                continue
            change = got / want - 1
            within = abs(change) <= method.band
            bands.append(
                {"p": p, "submitted_ms": want / 1e6, "reproduced_ms": got / 1e6,
                 "change_pct": round(change * 100, 2), "within": within}
            )  # fmt: skip
            if not within:
                outside.append(f"{label} P{p:g} {change:+.1%}")
        distance = (
            histogram_distance(theirs["histogram"], ours["histogram"])
            if theirs.get("histogram") and ours.get("histogram")
            else None
        )
        if distance is not None and distance > method.max_distance:
            outside.append(f"{label} histograms {distance:.2f} apart")
        doc["metrics"][metric] = {"bands": bands, "distance": distance}
        shown = ", ".join(
            f"P{b['p']:g} {b['reproduced_ms']:,.2f} vs {b['submitted_ms']:,.2f} ms" for b in bands
        )
        lines.append(
            f"{label} {shown}" + ("" if distance is None else f", distance {distance:.2f}")
        )
    doc["within"] = not outside
    caveat = " (evidence only: a reproducibility objection may not rest on latency, §11.4)"
    if not doc["metrics"]:
        message = "No latency to compare: a summary has no TTFT or TPOT"
        return LATENCY_RULE.finding(Severity.INFO, message, point=point), doc
    if outside:
        message = (
            f"Latency differs from the submitted run beyond the {method.band:.0%} band or a "
            f"histogram distance of {method.max_distance:.2f}: {', '.join(outside)}; "
            + "; ".join(lines)
            + caveat
        )
        return LATENCY_RULE.finding(Severity.WARNING, message, point=point), doc
    message = (
        f"Latency within the {method.band:.0%} band and a histogram distance of "
        f"{method.max_distance:.2f}: " + "; ".join(lines) + caveat
    )
    return LATENCY_RULE.finding(Severity.INFO, message, point=point), doc
