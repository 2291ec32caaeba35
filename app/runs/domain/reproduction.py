"""Judging a reproduction run against the submitted point (rules §11.4).

A reproduced throughput metric that falls short of the submitted value by more than the
reproducibility margin (10 % by default, configurable) is a finding for the reviewers.
A reproduction that measured more is not a problem, but one beyond the margin on the high
side is said to be beyond it, not "within" it. A run shorter than the point's §6.2
minimum duration does not count as evidence either way, whatever it measured. The run is
an unverified result of its own; it never changes the submitted numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule

RULE = portal_rule("reproduction-margin")
COMPARED = (("system_tps", "system tokens/s"), ("tps_per_user", "tokens/s per user"))


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
) -> Finding:
    """The verdict on one reproduction: which metric misses, which way and by how much;
    *duration_s* (the run's tracked window) below *min_duration_s* makes it no evidence."""
    shortfalls: list[str] = []
    above: list[str] = []
    compared: list[str] = []
    missing: list[str] = []
    for key, label in COMPARED:
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
    if duration_s is not None and min_duration_s and duration_s < min_duration_s:
        return finding(
            Severity.WARNING,
            f"Not evidence yet: the reproduction ran {duration_s:,.0f} s, and §6.2 asks "
            f"{min_duration_s:,.0f} s at this point before a run's numbers count"
            + (f"; it measured {detail}" if detail else ""),
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
            f"the {margin:.0%} margin: {detail}",
            fix="Check the endpoint, its configuration and load, then reproduce again; the "
            "submitter may be asked to explain the difference",
        )
    note = f" ({', '.join(missing)} not measured)" if missing else ""
    if above:
        return finding(
            Severity.INFO,
            f"Above the submitted value beyond the {margin:.0%} margin ({', '.join(above)}): "
            f"not a shortfall, but the endpoint no longer behaves as submitted: {detail}{note}",
        )
    return finding(Severity.INFO, f"Within the {margin:.0%} margin: {detail}{note}")
