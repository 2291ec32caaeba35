"""Re-counts and reproductions as the API serves them and the submission page shows them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from app.checks.domain.findings import Severity
from app.checks.services.findings import FindingView, finding_view
from app.core.per_user import per_user_metric
from app.core.views import Timestamp
from app.db.models import FindingRow, Reproduction, Retokenization
from app.jobs.views import JobView


def _job(job: Any) -> JobView | None:
    return None if job is None else JobView.model_validate(job)


class SubmittedMetrics(BaseModel):
    system_tps: float | None
    tps_per_user: float | None


class ReproducedMetrics(BaseModel):
    system_tps: float | None
    tps_per_user: float | None
    tpot_p90_ms: float | None
    ttft_p90_ms: float | None
    n_completed: int | None
    n_failed: int | None


class ReproductionView(BaseModel):
    """A reproduction run of one point: an unverified result beside the submitted one."""

    id: str
    point: str = Field(description="<system>/<model>/r<N>")
    endpoint_url: str | None = Field(
        description="the committee's, the chair's and the submitting organisation's only"
    )
    model: str
    concurrency: int
    time_cap_s: float
    requested_by: str | None = Field(description="as endpoint_url")
    created_at: Timestamp
    finished: bool
    status: Literal["unverified"] = Field(
        default="unverified", description="a reproduction is never a verified result"
    )
    job: JobView | None
    submitted: SubmittedMetrics
    reproduced: ReproducedMetrics
    verdict: Severity | None = Field(description="the throughput verdict (rules §11.4)")
    message: str | None = Field(description="the verdict's wording; as endpoint_url")
    same_system: bool = Field(description="a re-run on the exact same system (5% margin)")
    margin: float | None = Field(description="the margin it was judged with")
    per_user_metric: str = Field(description="tps_per_user, or e2e_avg_interactivity (agentic)")
    latency: dict[str, Any] | None = Field(
        description="TTFT and TPOT percentiles and histogram distance beside the submitted "
        "run's: evidence, never the verdict"
    )
    series: str | None = Field(
        default=None,
        description="the id of the first run of the series it was asked for with (runs go "
        "one after the other); null for a run asked for alone",
    )
    failure: str | None = Field(
        default=None,
        description="'could-not-run' when the run failed; why (an endpoint's address, say) "
        "is in the job's error, for those who see the review only",
    )


def _agentic(r: Reproduction) -> bool:
    system, model = r.point_label.split("/")[:2]
    return any(
        c.is_agentic
        for c in r.submission.curves
        if c.system.dir_name == system and c.benchmark_model == model
    )


def reproduction_view(r: Reproduction, *, private: bool) -> ReproductionView:
    """*private*: for those who see the review (the submitting organisation, the committee,
    the chair): who asked, where the load went, the verdict's wording. Anyone else sees the
    run's numbers and verdict."""
    agentic = _agentic(r)
    job = _job(r.job)
    failed = job is not None and job.state == "failed"
    return ReproductionView(
        id=r.public_id,
        point=r.point_label,
        endpoint_url=r.endpoint_url if private else None,
        model=r.model,
        concurrency=r.concurrency,
        time_cap_s=r.time_cap_s,
        requested_by=r.requested_by if private else None,
        created_at=r.created_at,
        finished=r.finished_at is not None,
        job=job if private or job is None else job.without_details(),
        submitted=SubmittedMetrics(
            system_tps=r.submitted_system_tps, tps_per_user=r.submitted_tps_per_user
        ),
        reproduced=ReproducedMetrics(
            system_tps=r.system_tps,
            tps_per_user=r.tps_per_user,
            tpot_p90_ms=r.tpot_p90_ms,
            ttft_p90_ms=r.ttft_p90_ms,
            n_completed=r.n_completed,
            n_failed=r.n_failed,
        ),
        verdict=r.verdict,
        message=r.message if private else None,
        same_system=r.same_system,
        margin=r.margin,
        per_user_metric=per_user_metric(agentic),
        latency=r.latency,
        series=r.series_first.public_id if r.series_first else None,
        failure="could-not-run" if failed else None,
    )


# Each compared metric, its label and the kind of figure it is (app/web/figures.py).
COMPARED = (
    ("total_output_tokens", "output tokens", "count"),
    ("system_tps", "system tokens/s", "tps"),
    ("tpot_p90_ms", "TPOT P90 (ms)", "tpot_ms"),
    ("tps_per_user", "tokens/s per user", "per_user"),
    ("ttft_p90_ms", "TTFT P90 (ms)", "ms"),
    ("n_samples_completed", "completed samples", "count"),
)


class EventsFile(BaseModel):
    sha256: str = Field(description="of the uncompressed file")
    size: int = Field(description="bytes, uncompressed")
    stored_size: int = Field(description="bytes at rest, compressed")
    source: str = Field(description="bundle or upload")


class ComparedMetric(BaseModel):
    metric: str
    label: str
    kind: str = Field(description="the kind of figure: count, tps, per_user, ms or tpot_ms")
    reported: float | None = Field(description="what the submission says")
    recounted: float | None = Field(description="what the reference tokenizer counted")


class SteadyStateWindow(BaseModel):
    super_pass_start: int = Field(description="first super-pass, from 0 over the whole run")
    super_pass_end: int = Field(description="last super-pass, inclusive")
    super_pass_size: int
    n_samples: int = Field(description="successful requests in the window")
    n_failed: int
    n_unfinished: int = Field(default=0, description="issued in the window, never completed")
    duration_s: float = Field(description="issue-time span, checked against §6.2")
    start_s: float = Field(description="seconds from the first tracked issue")
    end_s: float


class SteadyStateView(BaseModel):
    """A point's steady state in its events (harness/analysis/steady_state.py, rules §2), with the
    block its point.yaml declares."""

    status: str = Field(
        description="windowable, insufficient_duration, insufficient_passes, partial_dataset"
    )
    verdict: str = Field(description="STEADY STATE, drifting_up, anomaly, not found")
    window: SteadyStateWindow | None
    state: dict[str, str] = Field(description="per metric: Plateau, Drifting Up, Drifting Down")
    anomaly: dict[str, Any] | None = Field(description="a level shift: where and by how much")
    drifting_up: list[str] = Field(
        description="gated metrics rising from the window's start to the end of the run"
    )
    global_trend: dict[str, str] = Field(
        default_factory=dict,
        description="per gated metric, its trend from the window's start to the end: up, "
        "down, steady, insufficient",
    )
    notes: list[str] = Field(
        default_factory=list, description="where the rules' text reads otherwise than the method"
    )
    reason: str | None = Field(default=None, description="why there is no window")
    metrics: dict[str, Any] | None = Field(description="the point's metrics over the window")
    method: dict[str, Any] = Field(description="the detector's settings")
    super_pass_basis: str | None = Field(
        default=None,
        description="on what the super-pass size rests: one pass over the dataset, the "
        "benchmark definition's size, or point.yaml's where the portal knows no size (§2.1)",
    )
    n_super_passes: int
    warmup: int
    warmup_end_s: float | None = None
    plateaus: list[list[int]]
    n_unfinished: int = Field(default=0, description="tracked requests that never completed")
    super_passes: dict[str, list[float | None]] = Field(
        description="each metric per super-pass after the warm-up"
    )
    declared: dict[str, Any] | None = Field(default=None, description="point.yaml's block")
    declared_window: dict[str, Any] | None = Field(
        default=None, description="what the events hold for the declared window"
    )


def steady_state_view(r: Retokenization) -> SteadyStateView | None:
    return SteadyStateView.model_validate(r.steady_state) if r.steady_state else None


class RecountPartView(BaseModel):
    """One part of a re-count split across workers (every N-th block of lines)."""

    part: int = Field(description="from 1")
    parts: int
    job: JobView
    responses: int | None = Field(description="responses it counted, once done")


class RetokenizationView(BaseModel):
    """A re-count of one point's responses with the reference tokenizer."""

    id: str
    point: str = Field(description="<system>/<model>/r<N>")
    events: EventsFile
    tokenizer: str | None
    finished: bool
    job: JobView | None
    compared: list[ComparedMetric]
    recount: dict[str, Any] = Field(description="everything the re-count measured")
    steady_state: SteadyStateView | None = Field(
        description="a fixed-concurrency point's steady state, beside the declared one"
    )
    findings: list[FindingView]
    parts: list[RecountPartView] = Field(
        description="where the events were counted in parts by several workers"
    )


def retokenization_view(r: Retokenization, findings: list[FindingRow]) -> RetokenizationView:
    reported, recount = r.reported or {}, r.recount or {}
    artifact = r.artifact
    return RetokenizationView(
        id=r.public_id,
        point=r.point_label,
        events=EventsFile(
            sha256=artifact.sha256,
            size=artifact.size,
            stored_size=artifact.stored_size,
            source=artifact.source,
        ),
        tokenizer=r.tokenizer,
        finished=r.finished_at is not None,
        job=_job(r.job),
        compared=[
            ComparedMetric(
                metric=key,
                label=label,
                kind=kind,
                reported=reported.get(key),
                recounted=recount.get(key),
            )
            for key, label, kind in COMPARED
        ],
        recount=recount,
        steady_state=steady_state_view(r),
        findings=[finding_view(f) for f in findings],
        parts=[
            RecountPartView(
                part=p.part + 1,
                parts=p.parts,
                job=JobView.model_validate(p.job),
                responses=p.responses,
            )
            for p in r.parts
        ],
    )


class RunTimeSeries(BaseModel):
    """A point's run over time, from its re-counted events (harness/analysis/timeseries.py): one
    value per bin of ``bin_s`` seconds from the first tracked issue."""

    retokenization: str
    point: str
    bin_s: int
    start_ns: int = Field(description="the first tracked issue, on the run's own clock")
    t_s: list[int] = Field(description="each bin's start, seconds from start_ns")
    issued: list[int]
    completed: list[int] = Field(description="successful responses that ended in the bin")
    failed: list[int]
    in_flight: list[int] = Field(description="requests in flight at the bin's end")
    output_tps: list[float | None] = Field(description="output tokens/s over the bin")
    ttft_p50_ms: list[float | None]
    ttft_p90_ms: list[float | None]
    tpot_p50_ms: list[float | None]
    tpot_p90_ms: list[float | None]
    last_issue_s: float = Field(description="where issuing stopped and the drain began")
    end_s: float
    requests: int
    warmup_end_s: float | None = Field(
        default=None, description="where the steady-state analysis's warm-up super-passes end"
    )
    steady_window_s: list[float] | None = Field(
        default=None, description="the steady-state window, [start, end] on issue time"
    )


def run_time_series(r: Retokenization) -> RunTimeSeries | None:
    if not r.timeseries:
        return None
    steady = r.steady_state or {}
    window = steady.get("window")
    return RunTimeSeries(
        retokenization=r.public_id,
        point=r.point_label,
        **r.timeseries,
        warmup_end_s=steady.get("warmup_end_s"),
        steady_window_s=[window["start_s"], window["end_s"]] if window else None,
    )
