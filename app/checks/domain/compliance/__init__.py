"""Compliance: the official checker through its adapter, plus the portal's own rules."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from app.checks.domain.compliance.official import (
    OfficialReport,
    ParsedCurve,
    ParsedPoint,
    ParsedSystem,
    Registries,
    checker_version,
    run_official_checks,
)
from app.checks.domain.compliance.portal_rules import EarlierUpload, PortalContext, run_portal_rules
from app.checks.domain.compliance.readable import scan_readable
from app.checks.domain.datasets import OFFICIAL_DATASETS
from app.checks.domain.findings import SEVERITY_ORDER, Finding, Verdict, verdict_of
from app.core.cohorts import BusinessCalendar, Cohort


@dataclass
class ComplianceResult:
    verdict: Verdict
    checker_version: str
    findings: list[Finding]
    official: OfficialReport
    eligible_cohort: Cohort | None

    def to_dict(self) -> dict[str, object]:
        return {
            "verdict": self.verdict.value,
            "checker_version": self.checker_version,
            "findings": [f.to_dict() for f in self.findings],
        }


def run_compliance(
    path: Path,
    *,
    evaluated_at: dt.datetime,
    calendar: BusinessCalendar,
    earlier_uploads: list[EarlierUpload] | None = None,
    registries: Registries | None = None,
    datasets: frozenset[str] = OFFICIAL_DATASETS,
) -> ComplianceResult:
    unreadable = scan_readable(path)
    if unreadable:
        # The official checker never opens a file that failed this scan.
        return ComplianceResult(
            verdict=Verdict.REJECTED,
            checker_version=checker_version(),
            findings=unreadable,
            official=OfficialReport(checker_version(), path, [], [], []),
            eligible_cohort=None,
        )
    official = run_official_checks(path, registries)
    ctx = PortalContext(
        official=official,
        evaluated_at=evaluated_at,
        calendar=calendar,
        earlier_uploads=earlier_uploads,
        datasets=datasets,
    )
    findings = official.findings + run_portal_rules(ctx)
    # Stable order: most severe first, then as the checker ran them.
    ordered = sorted(
        enumerate(findings), key=lambda pair: (SEVERITY_ORDER[pair[1].severity], pair[0])
    )
    findings = [f for _, f in ordered]
    return ComplianceResult(
        verdict=verdict_of(findings),
        checker_version=official.checker_version,
        findings=findings,
        official=official,
        eligible_cohort=ctx.eligible_cohort,
    )


def with_findings(result: ComplianceResult, more: list[Finding]) -> ComplianceResult:
    """*result* with *more* of the portal's findings, in order and judged again."""
    if not more:
        return result
    ordered = sorted(
        enumerate(result.findings + more),
        key=lambda pair: (SEVERITY_ORDER[pair[1].severity], pair[0]),
    )
    findings = [f for _, f in ordered]
    passed = verdict_of(findings) == Verdict.PASSED
    return ComplianceResult(
        verdict=verdict_of(findings),
        checker_version=result.checker_version,
        findings=findings,
        official=result.official,
        eligible_cohort=result.eligible_cohort if passed else None,
    )


__all__ = [
    "ComplianceResult",
    "EarlierUpload",
    "OfficialReport",
    "ParsedCurve",
    "ParsedPoint",
    "ParsedSystem",
    "Registries",
    "checker_version",
    "run_compliance",
    "with_findings",
]
