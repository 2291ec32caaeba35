"""Read models for pages and the API: one place that shapes what users see."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from app.core.lifecycle import FINISHED, SubmissionState, result_status
from app.core.regions import region_basis, region_name
from app.db.models import (
    CheckRun,
    Curve,
    FindingRow,
    Publication,
    Reproduction,
    Submission,
)
from app.jobs.views import JobView
from app.results.domain.pareto import step_curve

STATE_LABELS = {
    "received": "Received, waiting for a worker",
    "checking": "Checking",
    "rejected": "Rejected by the automated checks",
    "passed_checks": "Passed the automated checks",
    "check_error": "The checks could not run",
    "finalized": "Finalized by peer review",
    "withdrawn": "Withdrawn",
    "invalidated": "Invalidated",
}


def get_submission(session: Session, public_id: str) -> Submission | None:
    return session.scalar(
        select(Submission)
        .where(Submission.public_id == public_id)
        .options(
            selectinload(Submission.curves).selectinload(Curve.points),
            selectinload(Submission.systems),
            selectinload(Submission.jobs),
            selectinload(Submission.organization),
            selectinload(Submission.archive),
        )
    )


def list_submissions(
    session: Session, limit: int = 100, offset: int = 0, *, everything: bool = False
) -> tuple[list[Submission], int]:
    """Submissions, newest first. Only published ones unless *everything* (rules §11.9:
    during review, results are for the committee and the submitters; the public sees what
    was published). An uploader follows its own submission by its unguessable id."""
    query = select(Submission)
    if not everything:
        query = query.where(
            Submission.id.in_(
                select(Publication.submission_id).where(Publication.in_record()).distinct()
            )
        )
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(
        query.options(selectinload(Submission.organization))
        .order_by(Submission.id.desc())
        .limit(limit)
        .offset(offset)
    ).all()
    return list(rows), total


def get_reproduction(session: Session, public_id: str) -> Reproduction | None:
    return session.scalar(select(Reproduction).where(Reproduction.public_id == public_id))


def latest_check_run(session: Session, submission: Submission) -> CheckRun | None:
    return session.scalar(
        select(CheckRun)
        .where(CheckRun.submission_id == submission.id, CheckRun.kind == "compliance")
        .order_by(CheckRun.id.desc())
        .options(selectinload(CheckRun.findings))
        .limit(1)
    )


def state_label(submission: Submission) -> str:
    return STATE_LABELS.get(submission.state, submission.state)


def checks_finished(submission: Submission) -> bool:
    """The automated checks are over (passed, rejected or failed)."""
    return SubmissionState(submission.state) in FINISHED


def submission_summary(submission: Submission) -> dict[str, Any]:
    job = submission.jobs[-1] if submission.jobs else None
    status = result_status(SubmissionState(submission.state), submission.for_review)
    return {
        "id": submission.public_id,
        "organization": submission.organization.name,
        "bundle_submission_id": submission.bundle_submission_id,
        "original_filename": submission.original_filename,
        "archive_sha256": submission.archive.sha256,
        "archive_size": submission.archive.size,
        "state": submission.state,
        "state_label": state_label(submission),
        "finished": checks_finished(submission),
        "for_review": submission.for_review,
        "publication_mode": submission.publication_mode,
        "result_status": status.value if status else None,
        "verdict": submission.verdict,
        "checker_version": submission.checker_version,
        "target_cohort": submission.target_cohort,
        "eligible_cohort": submission.eligible_cohort,
        "error": submission.error_message,
        "uploaded_at": submission.uploaded_at.isoformat(),
        "checks_finished_at": (
            submission.checks_finished_at.isoformat() if submission.checks_finished_at else None
        ),
        "job": None if job is None else JobView.model_validate(job).model_dump(),
    }


def finding_dict(row: FindingRow) -> dict[str, Any]:
    return {
        "rule": row.rule,
        "key": row.key,
        "severity": row.severity,
        "passed": row.severity != "error",
        "source": row.source,
        "clause": row.clause,
        "title": row.title,
        "message": row.message,
        "fix": row.fix,
        "path": row.path,
        "point": row.point,
    }


@dataclass
class FindingGroup:
    severity: str
    clause: str
    findings: list[dict[str, Any]]


def group_findings(rows: list[FindingRow], include_info: bool = False) -> list[FindingGroup]:
    """Findings grouped by severity (errors first), then by clause."""
    groups: OrderedDict[tuple[str, str], list[dict[str, Any]]] = OrderedDict()
    for severity in ("error", "warning", "info"):
        if severity == "info" and not include_info:
            continue
        selected = [r for r in rows if r.severity == severity]
        for row in sorted(selected, key=lambda r: (_clause_key(r.clause), r.position)):
            groups.setdefault((severity, row.clause or "—"), []).append(finding_dict(row))
    return [FindingGroup(sev, clause, items) for (sev, clause), items in groups.items()]


def _clause_key(clause: str) -> tuple[Any, ...]:
    digits = clause.lstrip("§").split(".")
    return tuple((0, int(d)) if d.isdigit() else (1, d) for d in digits)


# Every API and page shows a point's metrics to the same precision (the published record
# too): three decimals, whatever the bundle carried.
ROUNDED = ("system_tps", "tps_per_user", "tpot_p90_ms", "ttft_p90_ms", "e2e_avg_interactivity",
           "system_tps_per_kw", "point_power_kw")  # fmt: skip


def round_metrics(view: dict[str, Any]) -> dict[str, Any]:
    for key in ROUNDED:
        if view.get(key) is not None:
            view[key] = round(view[key], 3)
    return view


def point_dict(point: Any) -> dict[str, Any]:
    return round_metrics(
        {
            "dir": point.dir_name,
            "concurrency": point.concurrency,
            "region": point.region,
            "region_name": region_name(point.region),
            "declared_region": point.declared_region,
            "offline": point.offline_kind,
            "system_tps": point.system_tps,
            "tps_per_user": point.tps_per_user,
            "tpot_p90_ms": point.tpot_p90_ms,
            "ttft_p90_ms": point.ttft_p90_ms,
            "e2e_avg_interactivity": point.e2e_avg_interactivity,
            "system_tps_per_kw": point.system_tps_per_kw,
            "point_power_kw": point.point_power_kw,
            "n_samples_completed": point.n_samples_completed,
            "duration_ms": point.duration_ms,
            "accuracy": point.accuracy_status,
            "target_cohort": point.target_cohort,
            "state": getattr(point, "state", "active"),
            "state_reason": getattr(point, "state_reason", None),
        }
    )


def reproduction_dict(r: Reproduction) -> dict[str, Any]:
    job = r.job
    return {
        "id": r.public_id,
        "point": r.point_label,
        "endpoint_url": r.endpoint_url,
        "model": r.model,
        "concurrency": r.concurrency,
        "time_cap_s": r.time_cap_s,
        "requested_by": r.requested_by,
        "created_at": r.created_at.isoformat(),
        "finished": r.finished_at is not None,
        "status": "unverified",
        "job": None if job is None else JobView.model_validate(job).model_dump(),
        "submitted": {
            "system_tps": r.submitted_system_tps,
            "tps_per_user": r.submitted_tps_per_user,
        },
        "reproduced": {
            "system_tps": r.system_tps,
            "tps_per_user": r.tps_per_user,
            "tpot_p90_ms": r.tpot_p90_ms,
            "ttft_p90_ms": r.ttft_p90_ms,
            "n_completed": r.n_completed,
            "n_failed": r.n_failed,
        },
        "verdict": r.verdict,
        "message": r.message,
    }


def curve_dict(
    curve: Curve, reproductions: list[Reproduction] | None = None, active_only: bool = False
) -> dict[str, Any]:
    """A curve with its points, the official step line (architecture §8) and any
    reproduction runs of its points, drawn as unverified results beside them.

    Withdrawn, disputed and invalidated points (rules §11.1) never shape the step line;
    *active_only* leaves them out altogether, as publications do."""
    x_key = "e2e_avg_interactivity" if curve.is_agentic else "tps_per_user"
    active = [p for p in curve.points if p.state == "active"]
    plotted = [p for p in active if p.offline_kind != "dedicated"]
    xy = [(getattr(p, x_key), p.system_tps) for p in plotted if getattr(p, x_key) is not None]
    steps = step_curve(xy)
    dedicated = next((p for p in active if p.offline_kind == "dedicated"), None)
    elected = next((p for p in active if p.offline_kind == "elected"), None)
    system = curve.system
    return {
        # The same names as the results API: the display name, and the bundle's folder
        # (which point labels use).
        "system": system.system_name or system.dir_name,
        "system_dir": system.dir_name,
        "benchmark_model": curve.benchmark_model,
        "dataset": curve.dataset,
        "is_agentic": curve.is_agentic,
        "x_metric": x_key,
        "c_max": curve.c_max,
        "c_min": curve.c_min,
        "regions": curve.regions,
        "region_basis": _region_basis(curve),
        "points": [point_dict(p) for p in (active if active_only else curve.points)],
        "step_line": [list(v) for v in steps.line],
        "frontier": [list(v) for v in steps.frontier],
        "offline_ceiling": None
        if dedicated is None
        else {"system_tps": dedicated.system_tps, "concurrency": dedicated.concurrency},
        "elected_offline": None if elected is None else elected.dir_name,
        "reproductions": [
            reproduction_dict(r)
            for r in reproductions or []
            if r.point_label.startswith(f"{system.dir_name}/{curve.benchmark_model}/")
        ],
    }


def _region_basis(curve: Any) -> list[str] | None:
    fixed = [p.concurrency for p in curve.points if p.offline_kind != "dedicated"]
    if curve.c_min is None or curve.c_max is None:
        return None
    basis = region_basis(curve.c_min, curve.c_max, min(fixed) if fixed else None)
    return basis.lines() if basis else None


COMPARED = (
    ("total_output_tokens", "output tokens"),
    ("system_tps", "system tokens/s"),
    ("tpot_p90_ms", "TPOT P90 (ms)"),
    ("tps_per_user", "tokens/s per user"),
    ("ttft_p90_ms", "TTFT P90 (ms)"),
    ("n_samples_completed", "completed samples"),
)


def retokenization_dict(r: Any, findings: list[FindingRow]) -> dict[str, Any]:
    job = r.job
    reported, recount = r.reported or {}, r.recount or {}
    return {
        "id": r.public_id,
        "point": r.point_label,
        "events": {
            "sha256": r.artifact.sha256,
            "size": r.artifact.size,
            "stored_size": r.artifact.stored_size,
            "source": r.artifact.source,
        },
        "tokenizer": r.tokenizer,
        "finished": r.finished_at is not None,
        "job": None if job is None else JobView.model_validate(job).model_dump(),
        "compared": [
            {
                "metric": key,
                "label": label,
                "reported": reported.get(key),
                "recounted": recount.get(key),
            }
            for key, label in COMPARED
        ],
        "recount": recount,
        "findings": [finding_dict(f) for f in findings],
    }
