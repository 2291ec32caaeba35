"""Re-tokenization jobs: one per point, run in parallel by the workers.

Each job streams the point's stored ``events.jsonl``, re-counts with the reference
tokenizer and stores the re-counted values beside the reported ones, with findings.
Progress (events read, tokens/s, ETA) is kept on the job; a job can be cancelled while it
runs and started again. A point too large for one worker is counted in parts by several
(``app/runs/services/recount_parts.py``) and merged by its own job.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from app.audit import record
from app.checks.services.findings import record_findings
from app.core.bundle_files import read_mapping
from app.core.lifecycle import ENDED_JOB_STATES, JobState
from app.core.refusals import Kind, Refused
from app.core.times import Clock
from app.db.models import (
    CheckRun,
    FindingRow,
    Job,
    Point,
    RecountPart,
    RequestLogRow,
    Retokenization,
    Submission,
    utcnow,
)
from app.jobs.queue import (
    JobQueue,
    cancel_children,
    claim_job,
    enqueue_after_commit,
    mark_succeeded,
    set_progress,
)
from app.runs.domain.integrity import integrity_findings
from app.runs.domain.retokenize import (
    Analysis,
    Cancelled,
    DeclaredDataset,
    Reported,
    Tolerances,
    analyse,
    official_window_requests,
)
from app.runs.domain.steady_state import review_steady_state, steady_state_not_analysed
from app.runs.services.points import dataset_file, min_duration_s, point_folder
from app.runs.services.recount_parts import (
    PartsUnusable,
    merged_counts,
    planned_parts,
    remove_counts,
    start_parts,
)
from app.runs.services.super_passes import point_super_pass
from app.settings import Settings
from app.submissions.domain.bundle import point_summary
from app.submissions.services.artifacts import events_path, latest_events
from harness.analysis.run import steady_state_applies
from harness.load.dataset import DatasetError, dataset_keys, load_dataset
from harness.metrics.summary import Counts
from harness.metrics.tokens import TokenCounter, TokenizerNotFound, load_counter, load_registry

RETOKENIZE_POINT = "retokenize_point"
CANCELLING = JobState.CANCELLING
CANCELLED = JobState.CANCELLED


log = logging.getLogger(__name__)


class RetokenizationError(Refused):
    pass


def missing_tokenizers(settings: Settings, submission: Submission) -> list[str]:
    """The submission's benchmark models that this portal has no reference tokenizer for:
    their points cannot be re-counted, so the page does not offer it."""
    registry = load_registry(settings.tokenizer_registry)
    missing = []
    for model in sorted({c.benchmark_model for c in submission.curves}):
        entry = registry.get(model)
        try:
            found = entry is not None and entry.resolve().exists()
        except TokenizerNotFound:
            found = False
        if not found:
            missing.append(model)
    return missing


def request_retokenization(
    *,
    session: Session,
    queue: JobQueue,
    submission: Submission,
    point_label: str | None = None,
    actor: str | None = None,
) -> list[Retokenization]:
    """Queue a re-count of one point's events, or of every point that has them; a person
    asking (*actor*) is on the submission's timeline."""
    artifacts = latest_events(session, submission)
    if point_label is not None:
        if point_label not in artifacts:
            raise RetokenizationError(
                "no-events",
                f"no events.jsonl has been stored for point {point_label!r}",
                Kind.NOT_FOUND,
            )
        artifacts = {point_label: artifacts[point_label]}
    created = []
    for label, artifact in sorted(artifacts.items()):
        running = session.scalar(
            select(Retokenization)
            .join(Job, Retokenization.job_id == Job.id)
            .where(
                Retokenization.submission_id == submission.id,
                Retokenization.point_label == label,
                Job.state.not_in(ENDED_JOB_STATES),
            )
        )
        if running is not None:
            continue  # one re-count of a point at a time
        job = Job(kind=RETOKENIZE_POINT, submission=submission)
        session.add(job)
        retok = Retokenization(
            submission_id=submission.id, artifact=artifact, point_label=label, job=job
        )
        session.add(retok)
        session.flush()
        enqueue_after_commit(session, queue, job)
        created.append(retok)
    if actor is not None and created:
        points = ", ".join(r.point_label for r in created)
        record(session, submission, action="re-count requested", actor=actor, reason=points)
    return created


def cancel_retokenization(*, session: Session, retok: Retokenization, actor: str) -> None:
    job = retok.job
    if job is None or job.state in ENDED_JOB_STATES:
        raise RetokenizationError(
            "not-running", "this re-count is not queued or running", Kind.CONFLICT
        )
    record(
        session,
        retok.submission,
        action="re-count cancelled",
        actor=actor,
        reason=retok.point_label,
    )
    if job.state == JobState.QUEUED:
        job.state = CANCELLED
        job.finished_at = utcnow()
        job.stage = "cancelled before it started"
    elif job.state == JobState.WAITING:  # counted in parts: nobody runs the point's job
        job.state = CANCELLED
        job.finished_at = retok.finished_at = utcnow()
        job.stage = "cancelled while its parts were counted"
        cancel_children(session, job, job.finished_at)
    else:
        job.state = CANCELLING  # the running job sees it at its next progress report


def _point(submission: Submission, label: str) -> Point:
    system, model, point_dir = label.split("/", 2)
    for curve in submission.curves:
        if curve.system.dir_name != system or curve.benchmark_model != model:
            continue
        for point in curve.points:
            if point.dir_name == point_dir:
                return point
    raise RetokenizationError(
        "no-such-point", f"the submission has no point {label!r}", Kind.NOT_FOUND
    )


def _declared_dataset(settings: Settings, point: Point) -> DeclaredDataset | None:
    """The point's declared dataset as the portal's copy has it; None without a copy."""
    path = dataset_file(settings, point.curve.dataset)
    if path is None:
        return None
    try:
        keys = _prompt_keys(str(path), path.stat().st_mtime_ns)
    except (DatasetError, OSError) as exc:
        log.warning("dataset %s cannot be read: %s", point.curve.dataset, exc)
        return None
    return DeclaredDataset(str(point.curve.dataset), keys)


@lru_cache(maxsize=4)
def _prompt_keys(path: str, mtime_ns: int) -> frozenset[str]:
    """A dataset's prompts, read once per file version: every point of a submission (and
    each re-count again) declares the same one."""
    return dataset_keys(load_dataset(Path(path)))


def _from_point(point: Point) -> Reported:
    return Reported(
        total_output_tokens=point.total_output_tokens,
        system_tps=point.system_tps,
        tpot_p90_ms=point.tpot_p90_ms,
        tps_per_user=point.tps_per_user,
        ttft_p90_ms=point.ttft_p90_ms,
        duration_ms=point.duration_ms,
        n_samples_completed=point.n_samples_completed,
        n_samples_issued=point.n_samples_issued,
    )


def tolerances(settings: Settings) -> Tolerances:
    return Tolerances(
        output_tokens=settings.retokenize_tolerance_tokens,
        system_tps=settings.retokenize_tolerance_tokens,
        tpot_p90=settings.retokenize_tolerance_timing,
        tps_per_user=settings.retokenize_tolerance_timing,
        ttft_p90=settings.retokenize_tolerance_timing,
    )


def run_retokenization(
    *,
    session: Session,
    settings: Settings,
    job_id: int,
    queue: JobQueue | None = None,
    clock: Clock = utcnow,
    counter: TokenCounter | None = None,
) -> Retokenization | None:
    """Re-count one point; *counter* replaces the registry's reference tokenizer (the demo
    loader's own, for the demo's submissions only), and is named on the row by its name.

    With a *queue*, events larger than ``retokenize_split_bytes`` are counted in parts by
    other jobs first; this job then runs again and merges them."""
    retok = session.scalar(select(Retokenization).where(Retokenization.job_id == job_id))
    job = session.get(Job, job_id)
    if retok is None or job is None or job.state in ENDED_JOB_STATES:
        return retok
    if job.state == CANCELLING:
        _cancelled(session, job, retok, clock)
        return retok
    if not claim_job(session, job, stale_after_s=settings.job_stale_after_s, now=clock()):
        return retok  # another worker runs it
    set_progress(session, job, "opening the events", 0.0)
    submission = session.get(Submission, retok.submission_id)
    assert submission is not None
    point = _point(submission, retok.point_label)
    # Parts run on other workers, with the registry's tokenizer: never with a stand-in.
    parts_queue = queue if counter is None else None
    counter, problem = _reference_counter(settings, retok, point.curve.benchmark_model, counter)
    counts: TokenCounter | Counts | None = counter
    parts = list(retok.parts)
    if parts_queue is not None and counter is not None and not parts:
        planned = planned_parts(settings, retok.artifact.size)
        if planned > 1:
            start_parts(session, parts_queue, settings, retok, job, planned)
            return retok
    if parts:
        set_progress(session, job, f"merging the {len(parts)} parts", 0.0)
        try:
            counts = merged_counts(settings, retok, parts)
        except PartsUnusable as exc:
            fail_retokenization(session=session, job=job, reason=str(exc), clock=clock)
            return retok
    started = time.monotonic()
    reported = _from_point(point)
    try:
        analysis = analyse(
            events_path(settings, retok.artifact.sha256),
            counts,
            reported,
            retok.point_label,
            tolerances=tolerances(settings),
            load_pattern="agentic_inference" if point.curve.is_agentic else "concurrency",
            progress=_progress_of(session, job, max(retok.artifact.size, 1), started),
            tokenizer_problem=problem,
            dataset=None if point.curve.is_agentic else _declared_dataset(settings, point),
        )
    except Cancelled:
        _cancelled(session, job, retok, clock)
        return retok
    _check_against_the_bundle(
        session, settings, retok, point, analysis, reported, counted=counts is not None
    )
    finished = clock()
    if parts and job.started_at is not None:  # from the plan, over every part's counting
        elapsed = max((finished - job.started_at).total_seconds(), 1e-6)
    else:
        elapsed = max(time.monotonic() - started, 1e-6)
    _store_outcome(session, retok, job, analysis, reported, finished, elapsed)
    if parts:
        job.stage = f"{job.stage}, counted in {len(parts)} parts"
    session.commit()
    remove_counts(session=session, settings=settings, retok=retok)
    return retok


def _reference_counter(
    settings: Settings, retok: Retokenization, model: str, given: TokenCounter | None
) -> tuple[TokenCounter | None, str | None]:
    """The counter to re-count with, by the rules (every response through the chat
    template, plain text too: §1.3), named on *retok*; or None and why there is none."""
    if given is not None:
        retok.tokenizer = given.name
        return given.by_the_rules(), None
    try:
        counter = load_counter(model, load_registry(settings.tokenizer_registry)).by_the_rules()
    except TokenizerNotFound as exc:
        # The reason names server paths: for the operator's log, not for the page.
        log.warning("no reference tokenizer for %s: %s", model, exc)
        return None, "not configured on this portal"
    retok.tokenizer = public_tokenizer_name(model, counter.name)
    return counter, None


def _progress_of(
    session: Session, job: Job, total_bytes: int, started: float
) -> Callable[[int, int, int], None]:
    """What the analysis calls as it reads: the job's stage and share done, and a stop
    when someone cancelled it."""

    def progress(lines: int, read: int, tokens: int) -> None:
        session.refresh(job, ["state"])
        if job.state == CANCELLING:
            raise Cancelled
        elapsed = max(time.monotonic() - started, 1e-6)
        rate = read / elapsed
        eta = (total_bytes - read) / rate if rate > 0 else None
        stage = f"{lines:,} events read, {tokens / elapsed:,.0f} tokens/s"
        if eta is not None:
            stage += f", about {eta:.0f} s left"
        set_progress(session, job, stage, min(read / total_bytes, 1.0) * 0.95)

    return progress


def _check_against_the_bundle(
    session: Session,
    settings: Settings,
    retok: Retokenization,
    point: Point,
    analysis: Analysis,
    reported: Reported,
    *,
    counted: bool,
) -> None:
    """The chain from the events to the bundle's summary (it needs no tokenizer: checked
    either way), and the steady state against the point's declaration (rules §2.1)."""
    submission = point.curve.submission
    summary, point_yaml = _bundle_files(settings, submission, retok.point_label)
    analysis.findings += integrity_findings(
        retok.point_label,
        retok.artifact.sha256,
        summary,
        point_yaml,
        analysis.recount,
        duration_tolerance=settings.retokenize_tolerance_timing,
    )
    minimum_s = min_duration_s(point)
    if not steady_state_applies(point.load_pattern, point.offline_kind):
        return
    if not counted:
        analysis.findings.append(
            steady_state_not_analysed(
                retok.point_label,
                "no reference tokenizer: TPOT, which the method gates on, needs the "
                "responses' token counts",
            )
        )
    elif analysis.timings is not None and minimum_s:
        review = review_steady_state(
            retok.point_label,
            analysis.timings,
            point_yaml,
            reported,
            analysis.recount,
            benchmark=point_super_pass(session, point),
            minimum_s=minimum_s,
            tolerance=settings.retokenize_tolerance_timing,
        )
        retok.steady_state = review.document
        analysis.findings += review.findings


def _store_outcome(
    session: Session,
    retok: Retokenization,
    job: Job,
    analysis: Analysis,
    reported: Reported,
    finished: dt.datetime,
    elapsed: float,
) -> None:
    """The re-count on its row, the request record goodput reads, the findings, and the
    job marked done."""
    recount = analysis.recount.as_dict()
    recount["tokens_per_s"] = (analysis.recount.total_output_tokens or 0) / elapsed
    retok.reported = reported.__dict__
    retok.recount = recount
    retok.timeseries = analysis.timeseries
    retok.finished_at = finished
    if analysis.requests is not None and len(analysis.requests):
        requests, window, duration_ms = official_window_requests(
            analysis, retok.steady_state, reported.duration_ms
        )
        session.add(
            RequestLogRow(
                retokenization_id=retok.id,
                submission_id=retok.submission_id,
                point_label=retok.point_label,
                requests=len(requests),
                window=window,
                duration_ms=duration_ms,
                data=requests.to_bytes(),
                created_at=finished,
            )
        )
    record_findings(
        session,
        submission_id=retok.submission_id,
        job_id=job.id,
        kind="retokenization",
        version="re-tokenizer",  # the tokenizer used is on the re-tokenization row
        findings=analysis.findings,
        at=finished,
    )
    mark_succeeded(job, finished)
    job.stage = f"done: {recount['tokens_per_s']:,.0f} tokens/s"


def _bundle_files(
    settings: Settings, submission: Submission, label: str
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The point's result_summary.json and point.yaml as the bundle holds them (None where
    a file is missing or unreadable)."""
    folder = point_folder(settings, submission, label)

    return point_summary(folder), read_mapping(folder / "point.yaml")


def _cancelled(session: Session, job: Job, retok: Retokenization, clock: Clock) -> None:
    job.state = CANCELLED
    job.stage = "cancelled"
    job.finished_at = clock()
    retok.finished_at = job.finished_at
    session.commit()


def fail_retokenization(*, session: Session, job: Job, reason: str, clock: Clock = utcnow) -> None:
    job.state = JobState.FAILED
    job.error = reason
    job.finished_at = clock()
    cancel_children(session, job, job.finished_at)
    retok = session.scalar(select(Retokenization).where(Retokenization.job_id == job.id))
    if retok is not None:
        retok.finished_at = job.finished_at
    session.commit()


def fail_recount_part(*, session: Session, job: Job, reason: str, clock: Clock = utcnow) -> None:
    """A part could not be counted: neither can the point, and the page says which part."""
    job.state = JobState.FAILED
    job.error = reason
    job.finished_at = clock()
    part = session.scalar(select(RecountPart).where(RecountPart.job_id == job.id))
    parent = session.get(Job, job.parent_id) if job.parent_id is not None else None
    if part is None or parent is None or parent.state != JobState.WAITING:
        session.commit()
        return
    fail_retokenization(
        session=session,
        job=parent,
        reason=f"part {part.part + 1} of {part.parts} could not be counted: {reason}",
        clock=clock,
    )


def findings_of(session: Session, retok: Retokenization) -> list[FindingRow]:
    run = session.scalar(
        select(CheckRun).where(CheckRun.job_id == retok.job_id, CheckRun.kind == "retokenization")
    )
    return list(run.findings) if run else []


def public_tokenizer_name(model: str, location: str) -> str:
    """Which tokenizer counted, as the page may show it to anyone: the model and the
    tokenizer file's digest, never where the server keeps it."""
    path = Path(location)
    file = path / "tokenizer.json" if path.is_dir() else path
    try:
        digest = hashlib.sha256(file.read_bytes()).hexdigest()[:12]
    except OSError:
        return f"{model} reference tokenizer"
    return f"{model} reference tokenizer (tokenizer.json sha256 {digest}…)"


def list_retokenizations(session: Session, submission: Submission) -> list[Retokenization]:
    return list(
        session.scalars(
            select(Retokenization)
            .where(Retokenization.submission_id == submission.id)
            .order_by(Retokenization.id.desc())
            # Each run with its job as one statement saw them: a job loaded earlier in the
            # request (with the submission) must not show "running" beside a finished run.
            .options(joinedload(Retokenization.job))
            .execution_options(populate_existing=True)
        )
    )


def get_retokenization(session: Session, public_id: str) -> Retokenization | None:
    return session.scalar(
        select(Retokenization)
        .where(Retokenization.public_id == public_id)
        .options(joinedload(Retokenization.job))
        .execution_options(populate_existing=True)
    )
