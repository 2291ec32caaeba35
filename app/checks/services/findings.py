"""Recording findings: one check run with its findings, whatever produced them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from sqlalchemy.orm import Session

from app.checks.domain.findings import Finding, Severity, verdict_of
from app.db.models import CheckRun, FindingRow


def record_findings(
    session: Session,
    *,
    submission_id: int,
    job_id: int | None,
    kind: str,
    version: str,
    findings: Sequence[Finding],
    at: dt.datetime,
    path: str | None = None,
) -> CheckRun:
    """A check run of *kind* (compliance, reproduction, retokenization) with *findings*.

    ``path`` stands in for findings that carry none (a run folder, say).
    """
    run = CheckRun(
        submission_id=submission_id,
        job_id=job_id,
        kind=kind,
        checker_version=version,
        verdict=verdict_of(list(findings)).value,
        error_count=sum(f.severity == Severity.ERROR for f in findings),
        warning_count=sum(f.severity == Severity.WARNING for f in findings),
        evaluated_at=at,
    )
    for position, finding in enumerate(findings):
        run.findings.append(
            FindingRow(
                position=position,
                source=finding.source.value,
                rule=finding.rule,
                key=finding.key,
                severity=finding.severity.value,
                clause=finding.clause,
                title=finding.title,
                message=finding.message,
                fix=finding.fix,
                path=finding.path or path,
                point=finding.point,
            )
        )
    session.add(run)
    return run
