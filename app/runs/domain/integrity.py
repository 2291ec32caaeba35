"""Is the submitted summary the summary of these events? (rules §9.5, §4.3)

A point's numbers, its ``events.jsonl`` and its ``point.yaml`` should be one chain: the
summary names the hash of the event log it was computed from (``events_sha256``, written
by newer clients), the events hold as many issued and failed requests and as long a
tracked window as the summary reports, and the seeds the summary says the run used are
the ones ``point.yaml`` declares. Each link is a finding with the values side by side; a
link the files cannot show (an older summary without the hash, a summary without its run
configuration) says so instead of passing.
"""

from __future__ import annotations

from typing import Any

from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule
from app.runs.domain.retokenize import Recount

# The summary's run_config names (harness-metrics §6.4) and the point.yaml names they
# must equal (bundle-format §2.3: the v0.7 names fill the new ones when those are absent).
SEEDS = (
    ("scheduler_random_seed", "scheduler_rng_seed", "scheduler_random_seed"),
    ("dataloader_random_seed", "sample_index_rng_seed", "dataloader_random_seed"),
)


def _finding(rule: str, severity: Severity, message: str, point: str) -> Finding:
    return portal_rule(rule).finding(severity, message, point=point)


def _hash_finding(point: str, events_sha256: str, declared: Any) -> Finding:
    """The events file against the hash the summary names (newer clients write it)."""
    if not isinstance(declared, str) or not declared:
        return _finding(
            "events-summary-hash",
            Severity.INFO,
            "The summary carries no events_sha256 (older clients do not write it): the "
            f"events (sha256 {events_sha256[:12]}…) are tied to it by their counts only",
            point,
        )
    same = declared.strip().lower() == events_sha256.lower()
    return _finding(
        "events-summary-hash",
        Severity.INFO if same else Severity.ERROR,
        f"events.jsonl sha256 {events_sha256[:12]}…, the summary's events_sha256 "
        f"{declared[:12]}…: "
        + ("the same file" if same else "another run's events, or an edited file"),
        point,
    )


def integrity_findings(
    point: str,
    events_sha256: str,
    summary: dict[str, Any] | None,
    point_yaml: dict[str, Any] | None,
    recount: Recount,
    *,
    duration_tolerance: float,
) -> list[Finding]:
    """The chain from the events to the summary to ``point.yaml`` for one point."""
    findings: list[Finding] = []
    if summary is None:
        return [
            _finding(
                "events-summary-hash",
                Severity.WARNING,
                "The point's result_summary.json could not be read, so its events cannot be "
                "tied to it",
                point,
            )
        ]
    findings.append(_hash_finding(point, events_sha256, summary.get("events_sha256")))
    counts = []
    for key, label, ours in (
        ("n_samples_issued", "issued", recount.n_samples_issued),
        ("n_samples_failed", "failed", recount.n_samples_failed),
    ):
        theirs = summary.get(key)
        if isinstance(theirs, int) and not isinstance(theirs, bool):
            counts.append((label, theirs, ours))
    if counts:
        differ = [c for c in counts if c[1] != c[2]]
        findings.append(
            _finding(
                "events-summary-counts",
                Severity.ERROR if differ else Severity.INFO,
                "; ".join(
                    f"{label}: summary {theirs:,}, events {ours:,}"
                    for label, theirs, ours in counts
                ),
                point,
            )
        )
    reported_ns = summary.get("duration_ns")
    if isinstance(reported_ns, int | float) and reported_ns > 0 and recount.events_duration_ms:
        reported_ms = reported_ns / 1e6
        diff = (recount.events_duration_ms - reported_ms) / reported_ms
        findings.append(
            _finding(
                "events-summary-duration",
                Severity.ERROR if abs(diff) > duration_tolerance else Severity.INFO,
                f"tracked window: summary {reported_ms / 1000:,.3f} s, events "
                f"{recount.events_duration_ms / 1000:,.3f} s ({diff:+.2%}; tolerance "
                f"{duration_tolerance:.0%})",
                point,
            )
        )
    findings += _seed_findings(point, summary, point_yaml)
    return findings


def _seed_findings(
    point: str, summary: dict[str, Any], point_yaml: dict[str, Any] | None
) -> list[Finding]:
    run_config = summary.get("run_config")
    runtime = ((point_yaml or {}).get("runtime_settings") or {}).get("runtime")
    if not isinstance(run_config, dict) or not isinstance(runtime, dict):
        return []
    pairs = []
    for used, new, old in SEEDS:
        ran = run_config.get(used)
        declared = runtime.get(new, runtime.get(old))
        if ran is not None and declared is not None:
            pairs.append((used, ran, new, declared))
    if not pairs:
        return []
    differ = [p for p in pairs if str(p[1]) != str(p[3])]
    return [
        _finding(
            "summary-point-seeds",
            Severity.ERROR if differ else Severity.INFO,
            "; ".join(
                f"summary {used} {ran}, point.yaml {new} {declared}"
                for used, ran, new, declared in pairs
            )
            + ("" if not differ else ": the run did not use the seeds the point declares"),
            point,
        )
    ]
