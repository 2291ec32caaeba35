"""Reproduce a submitted point with the embedded harness (issue: reproduction runs).

A reviewer, the submitter or a buyer names an endpoint; a worker runs the harness at the
point's concurrency for a capped time, stores the run as an unverified result linked to
the point, and compares it with the submitted values within the reproducibility margin.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from app.audit import SYSTEM, record
from app.checks.domain.findings import Finding
from app.checks.services.findings import record_findings
from app.core.endpoints import (
    Endpoint,
    EndpointRefused,
    endpoint_allowed,
    header_safe,
    parse_endpoint,
)
from app.core.lifecycle import ENDED_JOB_STATES, JobState, SubmissionState
from app.core.per_user import per_user
from app.core.refusals import Kind, Refused
from app.core.times import Clock
from app.db.models import Curve, Job, Point, Reproduction, Submission, utcnow
from app.jobs.queue import (
    JobQueue,
    claim_job,
    enqueue_after_commit,
    mark_succeeded,
    requeue_later,
    set_progress,
)
from app.keys import decrypt, encrypt
from app.runs.domain.reproduction import (
    LatencyMethod,
    Measured,
    compare_latency,
    judge_reproduction,
)
from app.runs.services.points import dataset_file, min_duration_s, point_folder
from app.settings import Settings
from app.storage import private_folder
from app.submissions.domain.bundle import point_summary
from app.submissions.services.points import point_label
from harness.load.agentic import load_agentic
from harness.load.dataset import DatasetError, load_dataset
from harness.load.engine import AGENTIC, Progress, RunConfig
from harness.load.loadgen import run_point
from harness.metrics.timings import issue_span_s
from harness.metrics.tokens import TokenizerNotFound, load_counter, load_registry

REPRODUCE_POINT = "reproduce_point"


class ReproductionError(Refused):
    pass


def _find_point(submission: Submission, label: str) -> tuple[Curve, Point]:
    for curve in submission.curves:
        for point in curve.points:
            if point_label(curve, point) == label:
                return curve, point
    raise ReproductionError("no-such-point", f"submission has no point {label!r}", Kind.NOT_FOUND)


REPRODUCIBLE_STATES = frozenset({SubmissionState.PASSED_CHECKS, SubmissionState.FINALIZED})


def reproduction_refusal(
    settings: Settings, submission: Submission, curve: Curve | None = None
) -> ReproductionError | None:
    """Why a point of *submission* (of *curve*, when given) cannot be reproduced now: the
    page offers the form only where this is None, and the request is refused by it."""
    state = SubmissionState(submission.state)
    if state not in REPRODUCIBLE_STATES:
        return ReproductionError(
            "not-reproducible",
            f"a {state.value.replace('_', ' ')} submission is not reproduced: only results "
            "that passed their checks are",
            Kind.CONFLICT,
        )
    if curve is not None and dataset_file(settings, curve.dataset) is None:
        return ReproductionError(
            "no-dataset",
            f"this portal has no copy of dataset {curve.dataset!r} to replay yet: its "
            f"operator adds {curve.dataset}.jsonl (or .csv/.parquet) to the portal's datasets "
            "folder (README: Reproducing a point)",
        )
    return None


def _allowed_endpoint(
    settings: Settings, endpoint_url: str, model: str | None, api_key: str | None
) -> Endpoint:
    """The endpoint a reproduction would send load to, where the operator allows it; the
    model and key must be safe in a header (they are sent as one)."""
    try:
        endpoint = parse_endpoint(endpoint_url)
        header_safe("model", model or "")
        header_safe("api_key", api_key or "")
    except EndpointRefused as exc:
        raise ReproductionError("bad-endpoint", str(exc), Kind.INVALID, field=exc.field) from None
    if not endpoint_allowed(endpoint, settings.reproduction_allowed_endpoints):
        raise ReproductionError(
            "endpoint-not-allowed",
            f"the portal does not send load to {endpoint.host} port {endpoint.port}: its "
            "operator lists the endpoints it may load (README: Reproducing a point)",
            Kind.FORBIDDEN,
            field="endpoint_url",
        )
    return endpoint


def request_reproduction(
    *,
    session: Session,
    settings: Settings,
    queue: JobQueue,
    submission: Submission,
    point_label: str,
    endpoint_url: str,
    model: str | None = None,
    api_key: str | None = None,
    time_cap_s: float | None = None,
    requested_by: str | None = None,
    same_system: bool = False,
    runs: int = 1,
) -> Reproduction:
    """Queue a reproduction of one point, or a series of *runs* of it (for its spread);
    returns the first. *time_cap_s* by default is the point's §6.2 minimum plus the
    warm-up (``reproduction_warmup_s``), so that the run can count; *same_system* is the
    submitter of record's attestation (the caller asks the rule). Runs against one
    endpoint go one after the other (``run_reproduction``)."""
    if not 1 <= runs <= settings.reproduction_max_runs:
        raise ReproductionError(
            "bad-runs",
            f"runs must be a whole number from 1 to {settings.reproduction_max_runs}",
            field="runs",
        )
    curve, point = _find_point(submission, point_label)
    if time_cap_s is None:
        time_cap_s = default_time_cap_s(settings, point)
    if (refusal := reproduction_refusal(settings, submission)) is not None:
        raise refusal
    if point.offline_kind == "dedicated":
        raise ReproductionError(
            "offline-point",
            "a dedicated Offline run is not reproduced at a concurrency; pick "
            "a fixed-concurrency point",
        )
    endpoint = _allowed_endpoint(settings, endpoint_url, model, api_key)
    if not 1 <= time_cap_s <= settings.reproduction_max_time_cap_s:
        raise ReproductionError(
            "bad-time-cap",
            f"time cap must be between 1 and {settings.reproduction_max_time_cap_s:g} seconds",
        )
    if (refusal := reproduction_refusal(settings, submission, curve)) is not None:
        raise refusal
    made: list[Reproduction] = []
    for _ in range(runs):
        job = Job(kind=REPRODUCE_POINT, submission=submission)
        session.add(job)
        reproduction = Reproduction(
            submission=submission,
            point_id=point.id,
            point_label=point_label,
            job=job,
            endpoint_url=endpoint.url,
            model=(model or curve.benchmark_model).strip(),
            api_key_encrypted=encrypt(settings, api_key) if api_key else None,
            concurrency=point.concurrency,
            time_cap_s=float(time_cap_s),
            requested_by=requested_by,
            same_system=same_system,
            submitted_system_tps=point.system_tps,
            submitted_tps_per_user=per_user(point, curve.is_agentic),
            series_of=made[0].id if made else None,
        )
        session.add(reproduction)
        session.flush()
        made.append(reproduction)
        enqueue_after_commit(session, queue, job)
    if runs > 1:
        made[0].series_of = made[0].id  # the first belongs to its series too
    record(
        session,
        submission,
        action="reproduction requested",
        actor=requested_by or SYSTEM,
        reason=f"{point_label} at concurrency {point.concurrency}"
        + (f", {runs} runs one after the other" if runs > 1 else ""),
    )
    return made[0]


def earlier_run_on_the_endpoint(
    session: Session, reproduction: Reproduction
) -> Reproduction | None:
    """A run on *reproduction*'s endpoint asked for before it and not finished: while
    there is one, this one waits. The earliest never waits for a later one, so the runs
    on an endpoint go one at a time in the order they were asked for."""
    return session.scalar(
        select(Reproduction)
        .join(Job, Job.id == Reproduction.job_id)
        .where(
            Reproduction.endpoint_url == reproduction.endpoint_url,
            Reproduction.id < reproduction.id,
            Job.state.not_in(ENDED_JOB_STATES),
        )
        .order_by(Reproduction.id)
        .limit(1)
    )


def default_time_cap_s(settings: Settings, point: Point) -> float:
    """The point's §6.2 minimum and the warm-up, within the operator's cap."""
    minimum = min_duration_s(point) or 0.0
    return min(minimum + settings.reproduction_warmup_s, settings.reproduction_max_time_cap_s)


def run_reproduction(
    *,
    session: Session,
    settings: Settings,
    job_id: int,
    queue: JobQueue | None = None,
    clock: Clock = utcnow,
) -> Reproduction | None:
    reproduction = session.scalar(select(Reproduction).where(Reproduction.job_id == job_id))
    job = session.get(Job, job_id)
    if reproduction is None or job is None or job.state in (JobState.SUCCEEDED, JobState.FAILED):
        return reproduction
    if not claim_job(session, job, stale_after_s=settings.job_stale_after_s, now=clock()):
        return reproduction  # another worker runs it
    earlier = earlier_run_on_the_endpoint(session, reproduction)
    if earlier is not None and queue is not None:
        # One run at a time per endpoint: two would load it together and each measure
        # less than it holds. The earliest asked for goes first; this one waits.
        requeue_later(
            session, queue, job, now=clock(), delay_s=settings.reproduction_endpoint_wait_s,
            stage=f"waiting for run {earlier.public_id[:8]} on the same endpoint to finish",
        )  # fmt: skip
        return reproduction
    set_progress(session, job, "starting the harness", 0.0)
    try:
        _measure(session, settings, job, reproduction, clock)
    except (DatasetError, OSError, ValueError) as exc:
        session.rollback()
        _finish_failed(session, job, reproduction, f"{type(exc).__name__}: {exc}", clock)
    if queue is not None:
        _send_the_next_waiting(session, queue, reproduction)
    return reproduction


def _send_the_next_waiting(session: Session, queue: JobQueue, done: Reproduction) -> None:
    """The endpoint is free: the next run waiting for it starts now, not at its next look
    (the message it waits on arrives later and finds it taken or done)."""
    waiting = session.scalar(
        select(Job)
        .join(Reproduction, Reproduction.job_id == Job.id)
        .where(
            Reproduction.endpoint_url == done.endpoint_url,
            Reproduction.id > done.id,
            Job.state == JobState.QUEUED,
        )
        .order_by(Reproduction.id)
        .limit(1)
    )
    if waiting is not None:
        queue.send(waiting.id, waiting.kind)


def _run_config(settings: Settings, reproduction: Reproduction, agentic: bool) -> RunConfig:
    """The harness run the reproduction asked for, with its key decrypted for the run."""
    api_key = (
        decrypt(settings, reproduction.api_key_encrypted)
        if reproduction.api_key_encrypted
        else None
    )
    return RunConfig(
        endpoint=reproduction.endpoint_url,
        model=reproduction.model,
        load_pattern=AGENTIC if agentic else "concurrency",
        concurrency=int(reproduction.concurrency),
        duration_s=reproduction.time_cap_s,
        drain_timeout_s=min(60.0, reproduction.time_cap_s),
        api_key=api_key,
    )


def _keep_measured(
    settings: Settings, reproduction: Reproduction, summary: dict[str, Any], agentic: bool
) -> float:
    """The run's figures on the reproduction's row, and the margin it is judged by."""
    tpot = (summary.get("tpot") or {}).get("percentiles", {}).get("90.0")
    ttft = (summary.get("ttft") or {}).get("percentiles", {}).get("90.0")
    reproduction.system_tps = summary.get("tps")
    reproduction.tps_per_user = (
        summary.get("e2e_avg_interactivity")
        if agentic
        else (1e9 / tpot if tpot and tpot > 0 else None)
    )
    reproduction.tpot_p90_ms = tpot / 1e6 if tpot is not None else None
    reproduction.ttft_p90_ms = ttft / 1e6 if ttft is not None else None
    reproduction.n_completed = summary["n_samples_completed"]
    reproduction.n_failed = summary["n_samples_failed"]
    reproduction.margin = margin = (
        settings.reproduction_margin_same_system
        if reproduction.same_system
        else settings.reproduction_margin
    )
    return margin


def _latency_finding(
    settings: Settings, reproduction: Reproduction, summary: dict[str, Any]
) -> Finding:
    """The run's latency distribution against the submitted one's, kept on the row."""
    latency, reproduction.latency = compare_latency(
        _submitted_summary(settings, reproduction),
        summary,
        LatencyMethod(
            band=settings.reproduction_latency_band,
            max_distance=settings.reproduction_histogram_distance,
        ),
        reproduction.point_label,
    )
    return latency


def _measure(
    session: Session, settings: Settings, job: Job, reproduction: Reproduction, clock: Clock
) -> None:
    curve = session.scalar(
        select(Curve)
        .join(Point, Point.curve_id == Curve.id)
        .where(Point.id == reproduction.point_id)
    )
    benchmark = curve.benchmark_model if curve else reproduction.point_label.split("/")[1]
    endpoint = parse_endpoint(reproduction.endpoint_url)
    if not endpoint_allowed(endpoint, settings.reproduction_allowed_endpoints):
        # Checked again here: the allow-list may have shrunk since the request.
        raise ValueError(
            f"the portal no longer sends load to {endpoint.host} port {endpoint.port} "
            "(allowed endpoints)"
        )
    data = dataset_file(settings, curve.dataset if curve else None)
    if data is None:
        raise ValueError("the benchmark dataset is no longer available to the portal")
    agentic = bool(curve and curve.is_agentic)
    # An agentic point replays conversations, as it was measured (rules §1.1).
    samples: list[Any] = list(load_agentic(data)) if agentic else list(load_dataset(data))
    notes: list[str] = []
    try:
        counter = load_counter(benchmark, load_registry(settings.tokenizer_registry))
    except TokenizerNotFound as exc:
        counter = None
        notes.append(f"no reference tokenizer for {benchmark}: {exc}")
    # The harness's own files of the run: the worker's scratch, beside its other caches
    # (the numbers that matter are kept on the reproduction's row).
    cache = private_folder(settings.cache_dir)
    run_dir = cache / "reproductions" / reproduction.public_id
    reproduction.run_dir = run_dir.relative_to(cache).as_posix()

    def on_progress(p: Progress) -> None:
        fraction = min(p.elapsed_s / reproduction.time_cap_s, 1.0) * 0.9
        set_progress(session, job, f"{p.finished} responses, {p.in_flight} in flight", fraction)

    config = _run_config(settings, reproduction, agentic)
    result = run_point(config, samples, run_dir, counter, on_progress=on_progress)
    summary = result.summary.result
    margin = _keep_measured(settings, reproduction, summary, agentic)
    finding = judge_reproduction(
        Measured(reproduction.submitted_system_tps, reproduction.submitted_tps_per_user),
        Measured(reproduction.system_tps, reproduction.tps_per_user),
        margin,
        reproduction.point_label,
        # The issue-time span (§6.2), the drain after the last issue left out.
        duration_s=issue_span_s(result.timings) if result.timings is not None else 0.0,
        min_duration_s=_min_duration_s(session, reproduction),
        agentic=agentic,
        same_system=reproduction.same_system,
    )
    latency = _latency_finding(settings, reproduction, summary)
    if summary["n_samples_completed"] == 0:
        notes.append(f"no request completed ({summary['n_samples_failed']} failed)")
    if result.aborted:
        notes.append(result.aborted)
    message = finding.message + ("" if not notes else " — " + "; ".join(notes))
    finished = clock()
    record_findings(
        session,
        submission_id=reproduction.submission_id,
        job_id=job.id,
        kind="reproduction",
        version="endpoints-harness",
        findings=[replace(finding, message=message), latency],
        at=finished,
        path=reproduction.run_dir,
    )
    reproduction.verdict = finding.severity
    reproduction.message = message
    reproduction.finished_at = finished
    reproduction.api_key_encrypted = None  # not kept past the run
    mark_succeeded(job, finished)
    session.commit()


def _submitted_summary(settings: Settings, reproduction: Reproduction) -> dict[str, Any] | None:
    """The reproduced point's result_summary.json as its bundle holds it."""
    return point_summary(point_folder(settings, reproduction.submission, reproduction.point_label))


def _min_duration_s(session: Session, reproduction: Reproduction) -> float | None:
    """§6.2's minimum for the reproduced point; None when it is gone or has no region."""
    point = session.get(Point, reproduction.point_id) if reproduction.point_id else None
    return None if point is None else min_duration_s(point)


def _finish_failed(
    session: Session, job: Job, reproduction: Reproduction, reason: str, clock: Clock
) -> None:
    job.state = JobState.FAILED
    job.error = reason
    job.finished_at = clock()
    reproduction.message = f"the reproduction could not run: {reason}"
    reproduction.finished_at = job.finished_at
    reproduction.api_key_encrypted = None
    session.commit()


def fail_reproduction(*, session: Session, job: Job, reason: str, clock: Clock = utcnow) -> None:
    reproduction = session.scalar(select(Reproduction).where(Reproduction.job_id == job.id))
    if reproduction is None:
        job.state = JobState.FAILED
        job.error = reason
        session.commit()
        return
    _finish_failed(session, job, reproduction, reason, clock)


def list_reproductions(session: Session, submission: Submission) -> list[Reproduction]:
    return list(
        session.scalars(
            select(Reproduction)
            .where(Reproduction.submission_id == submission.id)
            .order_by(Reproduction.id.desc())
            # Each run with its job as one statement saw them: a job loaded earlier in the
            # request (with the submission) must not show "running" beside a finished run.
            .options(joinedload(Reproduction.job))
            .execution_options(populate_existing=True)
        )
    )


def get_reproduction(session: Session, public_id: str) -> Reproduction | None:
    return session.scalar(
        select(Reproduction)
        .where(Reproduction.public_id == public_id)
        .options(joinedload(Reproduction.job))
        .execution_options(populate_existing=True)
    )
