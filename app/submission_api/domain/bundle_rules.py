"""The portal's rules for a bundle that arrives for a submission composed from runs: it
is built from exactly the registered runs, and it declares what the submission was
registered with. Pure: the facts come in, findings of the catalogued rules go out."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.checks.domain.findings import Finding, Severity
from app.checks.domain.rules import portal_rule


@dataclass(frozen=True)
class RegisteredRun:
    public_id: str
    summary_digest: str
    concurrency: int | None


@dataclass(frozen=True)
class Registered:
    """What the submission was registered with (the official record's fields)."""

    division: str
    availability: str
    scenario: str
    target_availability_date: dt.date | None


def runs_findings(points: Mapping[str, str | None], runs: list[RegisteredRun]) -> list[Finding]:
    """*points*: each point's summary digest by label (``<system>/<model>/r<N>``). A point
    whose summary is no registered run's, and a registered run whose summary is in no
    point and whose concurrency has no point (an accuracy run is filed beside the
    performance run of its concurrency), are errors."""
    rule = portal_rule("bundle-runs")
    digests = {run.summary_digest for run in runs}
    findings = [
        rule.finding(
            Severity.ERROR, f"the point {label} is none of the submission's runs", point=label
        )  # fmt: skip
        for label, digest in sorted(points.items())
        if digest not in digests
    ]
    held = {d for d in points.values() if d}
    concurrencies = {label.rsplit("/r", 1)[-1] for label in points}
    for run in runs:
        if run.summary_digest not in held and str(run.concurrency) not in concurrencies:
            findings.append(
                rule.finding(
                    Severity.ERROR, f"the run {run.public_id} is in no point of the bundle"
                )
            )
    if findings:
        return findings
    return [
        rule.finding(Severity.INFO, f"the bundle holds exactly its {len(runs)} registered run(s)")
    ]


def _said(desc: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = desc.get(key)
        if value not in (None, ""):
            return str(value).strip().lower()
    return None


def declarations_findings(registered: Registered, descriptions: Mapping[str, Any]) -> list[Finding]:
    """*descriptions*: each system's first readable ``system_desc.json`` by folder."""
    rule = portal_rule("bundle-declarations")
    wanted = {
        "division": registered.division,
        "availability": registered.availability,
        "scenario": registered.scenario,
        "target availability date": (
            registered.target_availability_date.isoformat()
            if registered.target_availability_date
            else None
        ),  # fmt: skip
    }
    findings = []
    for system, desc in sorted(descriptions.items()):
        said = {
            "division": _said(desc, "division"),
            "availability": _said(
                desc, "system_availability_status", "availability_status", "publication_status"
            ),  # fmt: skip
            "scenario": _said(desc, "scenario"),
            "target availability date": _said(desc, "target_availability_date"),
        }
        for field, value in said.items():
            if value is not None and wanted[field] is not None and value != wanted[field]:
                findings.append(rule.finding(
                    Severity.ERROR,
                    f"{system}: the submission was registered with {field} "
                    f"{wanted[field]!r}, its system_desc.json says {value!r}",
                ))  # fmt: skip
    if findings:
        return findings
    return [
        rule.finding(Severity.INFO, "the bundle declares what the submission was registered with")
    ]
