"""Findings: recording one check run with its findings, whatever produced them, and
showing them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.checks.domain.findings import Finding, Severity, Source, Verdict, verdict_of
from app.core.numbers import whole_number
from app.core.views import Timestamp, left_out_if_none
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


# --- what pages and the API show of findings ------------------------------------------------


class FindingView(BaseModel):
    """A finding as the API and the pages show it, linked to its rule (``/rules``)."""

    rule: str = Field(description="the rule's id in /api/v1/rules")
    key: str | None
    severity: Severity
    passed: bool = Field(description="not an error")
    source: Source
    clause: str | None = Field(description="the rule-book section")
    title: str | None
    message: str
    fix: str | None
    path: str | None = Field(description="the file in the bundle it is about")
    point: str | None = Field(description="<system>/<model>/r<N>, if about one point")


def finding_view(row: FindingRow) -> FindingView:
    return FindingView(
        rule=row.rule,
        key=row.key,
        severity=Severity(row.severity),
        passed=row.severity != Severity.ERROR,
        source=Source(row.source),
        clause=row.clause,
        title=row.title,
        message=row.message,
        fix=row.fix,
        path=row.path,
        point=row.point,
    )


class FindingGroup(BaseModel):
    severity: Severity
    clause: str
    findings: list[FindingView]


def group_findings(rows: Sequence[FindingRow], include_info: bool = False) -> list[FindingGroup]:
    """Findings grouped by severity (errors first), then by clause in the rule book's order."""
    groups: dict[tuple[Severity, str], list[FindingView]] = {}
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        if severity == Severity.INFO and not include_info:
            continue
        selected = [r for r in rows if r.severity == severity]
        for row in sorted(selected, key=lambda r: (_clause_key(r.clause), r.position)):
            groups.setdefault((severity, row.clause or "—"), []).append(finding_view(row))
    return [
        FindingGroup(severity=severity, clause=clause, findings=items)
        for (severity, clause), items in groups.items()
    ]


def _clause_key(clause: str | None) -> tuple[tuple[int, int | str], ...]:
    digits = (clause or "").lstrip("§").split(".")
    numbers = [whole_number(d) for d in digits]
    return tuple((1, d) if n is None else (0, n) for d, n in zip(digits, numbers, strict=True))


class CheckReport(BaseModel):
    """The latest check run, in the shape of ``endpoints-portal check --json``."""

    verdict: Verdict | None = Field(description="null until the checks ran")
    checker_version: str | None
    evaluated_at: Timestamp | None = left_out_if_none()
    state: str | None = left_out_if_none("the submission's state, while no check ran")
    findings: list[FindingView]


def check_report(run: CheckRun | None, submission_state: str) -> CheckReport:
    if run is None:
        return CheckReport(verdict=None, checker_version=None, findings=[], state=submission_state)
    return CheckReport(
        verdict=Verdict(run.verdict),
        checker_version=run.checker_version,
        evaluated_at=run.evaluated_at,
        findings=[finding_view(f) for f in run.findings],
    )
