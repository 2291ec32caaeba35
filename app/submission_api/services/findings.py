"""The checks' extra rules for a bundle composed from runs (``bundle_rules``), with their
facts gathered: the registered record and runs from the database, the points and system
descriptions from the bundle the worker checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.checks.domain.compliance import ComplianceResult
from app.checks.domain.findings import Finding
from app.core.bundle_files import read_mapping
from app.core.digests import canonical_digest
from app.db.models import ApiSubmission, Submission
from app.submission_api.domain.bundle_rules import (
    Registered,
    RegisteredRun,
    declarations_findings,
    runs_findings,
)
from app.submission_api.services.records import active_runs
from app.submissions.domain.disclosures import summary_digests


def _descriptions(root: Path) -> dict[str, Any]:
    """Each system's first readable ``system_desc.json``."""
    found: dict[str, Any] = {}
    for path in sorted(root.glob("results/*/*/r*/system_desc.json")):
        system = path.relative_to(root / "results").parts[0]
        if system not in found and (desc := read_mapping(path)) is not None:
            found[system] = desc
    return found


def bundle_findings(
    session: Session, submission: Submission, root: Path, _result: ComplianceResult
) -> list[Finding]:
    """The rules of a submission composed from runs; none for any other."""
    record = session.scalar(
        select(ApiSubmission).where(ApiSubmission.submission_id == submission.id)
    )
    if record is None:
        return []
    runs = [
        RegisteredRun(run.public_id, canonical_digest(run.result_summary), run.concurrency)
        for run in active_runs(record)
    ]
    registered = Registered(
        record.division, record.availability, record.scenario, record.target_availability_date
    )
    return runs_findings(summary_digests(root), runs) + declarations_findings(
        registered, _descriptions(root)
    )
