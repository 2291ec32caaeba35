"""Read models for pages and the API: one place that shapes what users see."""

from __future__ import annotations

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from app.checks.domain.findings import Verdict
from app.core.accuracy import PointAccuracy
from app.core.finish import FinishReasons
from app.core.lifecycle import (
    FINISHED,
    PublicationMode,
    ResultStatus,
    SubmissionState,
    result_status,
    status_badge,
)
from app.core.regions import Offline, region_basis, region_name
from app.core.run_summary import NewerSummaryFields
from app.core.views import Metric, Timestamp
from app.db.models import CheckRun, Curve, Point, Publication, Reproduction, Submission
from app.jobs.views import JobView
from app.publishing.domain.snapshot import OfflineCeiling, Percentiles
from app.results.domain.pareto import StepCurve, step_curve
from app.runs.services.views import ReproductionView, reproduction_view

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


class SubmissionSummary(BaseModel):
    """A submission in a list: what it is, where its checks stand, its status."""

    id: str = Field(description="the portal's id of the upload")
    organization: str
    bundle_submission_id: str | None = Field(description="the id the bundle gives itself")
    original_filename: str
    archive_sha256: str
    archive_size: int
    state: SubmissionState
    state_label: str
    finished: bool = Field(description="the automated checks are over (passed or not)")
    for_review: bool = Field(description="false: an unverified result, never reviewed")
    publication_mode: PublicationMode
    result_status: ResultStatus | None = Field(description="the status its results carry")
    status_badge: str | None = Field(
        description="what pages show: the status, or 'confidential' for a result in "
        "confidential review (never called provisional)"
    )
    verdict: Verdict | None
    checker_version: str | None
    target_cohort: str | None
    eligible_cohort: str | None
    error: str | None = Field(description="why the checks could not run")
    uploaded_at: Timestamp
    checks_finished_at: Timestamp | None
    job: JobView | None = Field(description="the latest check job")


def summary_fields(submission: Submission) -> dict[str, object]:
    """A submission's summary as keyword arguments, for the read models that extend it."""
    job = submission.jobs[-1] if submission.jobs else None
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
        "result_status": result_status(SubmissionState(submission.state), submission.for_review),
        "status_badge": status_badge(
            SubmissionState(submission.state),
            submission.for_review,
            PublicationMode(submission.publication_mode),
        ),
        "verdict": submission.verdict,
        "checker_version": submission.checker_version,
        "target_cohort": submission.target_cohort,
        "eligible_cohort": submission.eligible_cohort,
        "error": submission.error_message,
        "uploaded_at": submission.uploaded_at,
        "checks_finished_at": submission.checks_finished_at,
        "job": None if job is None else JobView.model_validate(job),
    }


def submission_summary(submission: Submission) -> SubmissionSummary:
    return SubmissionSummary.model_validate(summary_fields(submission))


class PointView(BaseModel):
    """An operating point of a submitted curve, with its review state."""

    dir: str = Field(description="the point's folder in the bundle, e.g. r64")
    concurrency: int
    region: str | None = Field(description="the concurrency region the portal derived")
    region_name: str | None
    declared_region: str | None = Field(description="the region the bundle declared")
    offline: Offline
    system_tps: Metric
    tps_per_user: Metric | None
    tpot_p90_ms: Metric | None
    ttft_p90_ms: Metric | None
    e2e_avg_interactivity: Metric | None
    system_tps_per_kw: Metric | None
    point_power_kw: Metric | None
    engaged_share: float | None = Field(
        description="where nodes_used engages fewer nodes than the system has (§4.5.3): "
        "the share engaged; null for the whole system"
    )
    accelerators_engaged: int | None = Field(description="the engaged nodes' accelerators")
    n_samples_completed: int
    duration_ms: float
    accuracy: str = Field(description="passed, failed or none")
    target_cohort: str | None
    state: str = Field(description="active, withdrawn, disputed or invalidated (rules §11.1)")
    state_reason: str | None
    percentiles: Percentiles | None = Field(description="P50/P90/P95/P99 from the summary")
    finish_reasons: FinishReasons | None = Field(
        default=None, description="how the responses ended, where the summary says"
    )
    summary_fields: NewerSummaryFields | None = Field(
        default=None, description="the newer summary fields, where the summary has them"
    )
    accuracy_detail: PointAccuracy | None = Field(
        default=None, description="each accuracy entry and what the gate compared"
    )


def point_view(point: Point) -> PointView:
    return PointView(
        dir=point.dir_name,
        concurrency=point.concurrency,
        region=point.region,
        region_name=region_name(point.region),
        declared_region=point.declared_region,
        offline=Offline(point.offline_kind),
        system_tps=point.system_tps,
        tps_per_user=point.tps_per_user,
        tpot_p90_ms=point.tpot_p90_ms,
        ttft_p90_ms=point.ttft_p90_ms,
        e2e_avg_interactivity=point.e2e_avg_interactivity,
        system_tps_per_kw=point.system_tps_per_kw,
        point_power_kw=point.point_power_kw,
        engaged_share=point.engaged_share,
        accelerators_engaged=point.accelerators_engaged,
        n_samples_completed=point.n_samples_completed,
        duration_ms=point.duration_ms,
        accuracy=point.accuracy_status,
        target_cohort=point.target_cohort,
        state=point.state,
        state_reason=point.state_reason,
        percentiles=Percentiles.model_validate(point.percentiles) if point.percentiles else None,
        finish_reasons=FinishReasons.of(point.finish_reason_counts),
        summary_fields=NewerSummaryFields.of(
            point.input_sequence_lengths, point.early_stopping, point.run_config
        ),
        accuracy_detail=PointAccuracy.read(point.accuracy_detail),
    )


class CurveView(BaseModel):
    """A submitted curve: its points, the official step line (architecture §8) and the
    reproduction runs of its points, drawn as unverified results beside them."""

    # The same names as the results API: the display name, and the bundle's folder
    # (which point labels use).
    system: str
    system_dir: str
    benchmark_model: str
    dataset: str | None
    is_agentic: bool
    x_metric: str = Field(description="tps_per_user, or e2e_avg_interactivity (agentic)")
    c_max: int | None
    c_min: int | None
    regions: dict[str, list[int]] | None
    region_basis: list[str] | None = Field(description="how the regions were derived, in words")
    points: list[PointView]
    step_line: list[list[float]]
    frontier: list[list[float]]
    offline_ceiling: OfflineCeiling | None
    elected_offline: str | None
    reproductions: list[ReproductionView]


def curve_view(
    curve: Curve, reproductions: list[Reproduction] | None = None, active_only: bool = False
) -> CurveView:
    """Withdrawn, disputed and invalidated points (rules §11.1) never shape the step line;
    *active_only* leaves them out altogether, as the public sees the curve."""
    active = [p for p in curve.points if p.state == "active"]
    steps = step_line_of(curve)
    ceiling, elected = offline_of(active)
    system = curve.system
    prefix = f"{system.dir_name}/{curve.benchmark_model}/"
    return CurveView(
        system=system.system_name or system.dir_name,
        system_dir=system.dir_name,
        benchmark_model=curve.benchmark_model,
        dataset=curve.dataset,
        is_agentic=curve.is_agentic,
        x_metric=x_metric_of(curve),
        c_max=curve.c_max,
        c_min=curve.c_min,
        regions=curve.regions,
        region_basis=_region_basis(curve),
        points=[point_view(p) for p in (active if active_only else curve.points)],
        step_line=[list(v) for v in steps.line],
        frontier=[list(v) for v in steps.frontier],
        offline_ceiling=ceiling,
        elected_offline=elected,
        reproductions=[
            reproduction_view(r, private=False)
            for r in reproductions or []
            if r.point_label.startswith(prefix)
        ],
    )


def offline_of(active: list[Point]) -> tuple[OfflineCeiling | None, str | None]:
    """A curve's Offline runs: the dedicated one's ceiling, and the elected point's folder."""
    dedicated = next((p for p in active if p.offline_kind == Offline.DEDICATED), None)
    elected = next((p for p in active if p.offline_kind == Offline.ELECTED), None)
    ceiling = (
        None
        if dedicated is None
        else OfflineCeiling(system_tps=dedicated.system_tps, concurrency=dedicated.concurrency)
    )
    return ceiling, None if elected is None else elected.dir_name


def x_metric_of(curve: Curve) -> str:
    return "e2e_avg_interactivity" if curve.is_agentic else "tps_per_user"


def step_line_of(curve: Curve) -> StepCurve:
    """The official step line of a curve's active, plotted points (dedicated Offline runs
    have no per-user rate and are a ceiling, not a point of the line)."""
    x_key = x_metric_of(curve)
    plotted = [p for p in curve.points if p.state == "active" and p.offline_kind != "dedicated"]
    return step_curve(
        [(getattr(p, x_key), p.system_tps) for p in plotted if getattr(p, x_key) is not None]
    )


def _region_basis(curve: Curve) -> list[str] | None:
    fixed = [p.concurrency for p in curve.points if p.offline_kind != "dedicated"]
    if curve.c_min is None or curve.c_max is None:
        return None
    basis = region_basis(curve.c_min, curve.c_max, min(fixed) if fixed else None)
    return basis.lines() if basis else None
