"""A large point's re-count split across workers.

The point's job (``retokenize_point``) plans: a stored events file larger than
``retokenize_split_bytes`` is counted in parts (``harness/metrics/ranges.py``), one
``recount_part`` job each, and the point's job waits for them (``JobState.WAITING``).
Each part counts its own lines with the reference tokenizer and saves the counts in the
artifact store (content-addressed, as the workers share nothing else). When the last
part is in, the point's job runs again and computes everything in one pass over the events with
the parts' counts in place of a tokenizer: the numbers one worker counting the whole
file gives.
"""

from __future__ import annotations

import logging
import math
import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.lifecycle import ENDED_JOB_STATES, JobState
from app.core.times import Clock
from app.db.models import Job, RecountPart, Retokenization, utcnow
from app.jobs.queue import (
    JobQueue,
    claim_job,
    mark_succeeded,
    release_parent,
    set_progress,
    wait_for_children,
)
from app.settings import Settings
from app.storage import ObjectCorrupt, ObjectMissing, artifact_store, counts_key
from app.submissions.services.artifacts import events_path
from harness.load.loadgen import file_sha256
from harness.metrics.ranges import PartCounts, Precounted, count_part
from harness.metrics.tokens import TokenizerNotFound, load_counter, load_registry

RECOUNT_PART = "recount_part"

log = logging.getLogger(__name__)


class PartsUnusable(Exception):
    """A part's saved counts are missing or not the file it recorded."""


class _Stopped(Exception):
    pass


def planned_parts(settings: Settings, events_bytes: int) -> int:
    """How many parts a point's events of *events_bytes* (uncompressed) are counted in."""
    if events_bytes <= settings.retokenize_split_bytes:
        return 1
    return min(
        settings.retokenize_max_parts, math.ceil(events_bytes / settings.retokenize_split_bytes)
    )


def start_parts(
    session: Session,
    queue: JobQueue,
    settings: Settings,
    retok: Retokenization,
    job: Job,
    parts: int,
) -> None:
    """Queue the part jobs of *retok* and park its job until they are in."""
    children = [Job(kind=RECOUNT_PART, submission_id=retok.submission_id) for _ in range(parts)]
    wait_for_children(
        session, queue, job, children, stage=f"counting in {parts} parts on the workers"
    )
    for number, child in enumerate(children):
        session.add(
            RecountPart(
                retokenization_id=retok.id,
                job_id=child.id,
                part=number,
                parts=parts,
                block_lines=settings.retokenize_block_lines,
            )
        )
    session.commit()


def merged_counts(
    settings: Settings, retok: Retokenization, parts: list[RecountPart]
) -> Precounted:
    """Every part's saved counts, each checked against the hash its job recorded (the
    store's ``StoreUnavailable`` is raised: the point's job waits for it)."""
    store = artifact_store(settings)
    loaded = []
    for part in parts:
        label = f"part {part.part + 1} of {part.parts}"
        if part.counts_sha256 is None:
            raise PartsUnusable(f"the counts of {label} were never saved")
        try:
            path = store.local_path(counts_key(part.counts_sha256))
            if file_sha256(path) != part.counts_sha256:
                raise ObjectCorrupt(f"{path.name} does not hash to its name")
        except ObjectMissing:
            raise PartsUnusable(f"the counts of {label} are missing from storage") from None
        except ObjectCorrupt:
            raise PartsUnusable(f"the counts of {label} are not the file its job saved") from None
        loaded.append(PartCounts.load(path))
    return Precounted(loaded)


def remove_counts(*, session: Session, settings: Settings, retok: Retokenization) -> None:
    """The parts' counts, once merged."""
    _drop_counts(session, settings, list(retok.parts))


def remove_unwanted_counts(*, session: Session, settings: Settings) -> None:
    """Parts' counts no re-count will merge any more (it failed, was cancelled, or is
    gone): the recovery round removes them from the store."""
    stale = session.scalars(
        select(RecountPart)
        .join(Retokenization, RecountPart.retokenization_id == Retokenization.id)
        .where(RecountPart.counts_sha256.is_not(None), Retokenization.finished_at.is_not(None))
    ).all()
    _drop_counts(session, settings, list(stale))


def _drop_counts(session: Session, settings: Settings, parts: list[RecountPart]) -> None:
    """Remove *parts*' counts from the store, but not an object an unfinished re-count's
    part still needs (the same counts, content-addressed, are stored once)."""
    store = artifact_store(settings)
    for part in parts:
        if part.counts_sha256 is None:
            continue
        needed = session.scalar(
            select(RecountPart.id)
            .join(Retokenization, RecountPart.retokenization_id == Retokenization.id)
            .where(
                RecountPart.counts_sha256 == part.counts_sha256,
                RecountPart.id != part.id,
                Retokenization.finished_at.is_(None),
            )
            .limit(1)
        )
        if needed is None:
            store.delete(counts_key(part.counts_sha256))
        part.counts_sha256 = None
    session.commit()


def run_recount_part(
    *,
    session: Session,
    settings: Settings,
    job_id: int,
    queue: JobQueue,
    clock: Clock = utcnow,
) -> RecountPart | None:
    """Count one part of a point's events and save the counts; the last part in queues the
    point's job again, for the merge."""
    part = session.scalar(select(RecountPart).where(RecountPart.job_id == job_id))
    job = session.get(Job, job_id)
    if part is None or job is None or job.state in ENDED_JOB_STATES:
        return part
    if job.state == JobState.CANCELLING:
        _stopped(session, job, clock)
        return part
    if not claim_job(session, job, stale_after_s=settings.job_stale_after_s, now=clock()):
        return part  # another worker runs it
    retok = session.get(Retokenization, part.retokenization_id)
    assert retok is not None
    label = f"part {part.part + 1} of {part.parts}"
    model = retok.point_label.split("/", 2)[1]
    try:
        # As the whole re-count counts (rules §1.3): through the template, plain text too.
        counter = load_counter(model, load_registry(settings.tokenizer_registry)).by_the_rules()
    except TokenizerNotFound as exc:
        log.warning("no reference tokenizer for %s on this worker: %s", model, exc)
        raise RuntimeError(f"this worker has no reference tokenizer for {model}") from None

    def progress(lines: int) -> None:
        session.refresh(job, ["state"])
        if job.state == JobState.CANCELLING:
            raise _Stopped
        # The file's line count is not known before the end: the stage says how far.
        set_progress(session, job, f"{label}: {lines:,} lines read", job.progress)

    set_progress(session, job, f"{label}: reading the events", 0.0)
    try:
        counts = count_part(
            events_path(settings, retok.artifact.sha256),
            counter,
            part.part,
            part.parts,
            count_prompts=False,  # input lengths are not compared (app/runs/domain/retokenize)
            block_lines=part.block_lines,
            progress=progress,
        )
    except _Stopped:
        _stopped(session, job, clock)
        return part
    settings.tmp_dir.mkdir(parents=True, exist_ok=True)
    saved = settings.tmp_dir / f"counts-{uuid.uuid4().hex}.npz"
    try:
        counts.save(saved)
        sha256 = file_sha256(saved)
        artifact_store(settings).put_file(counts_key(sha256), saved)  # whole, or not at all
    finally:
        saved.unlink(missing_ok=True)
    part.counts_sha256 = sha256
    part.responses = len(counts.output_lines)
    mark_succeeded(job, clock())
    job.stage = f"{label}: {part.responses:,} responses counted"
    session.commit()
    release_parent(session, queue, job, stage=f"merging the {part.parts} parts")
    return part


def _stopped(session: Session, job: Job, clock: Clock) -> None:
    job.state = JobState.CANCELLED
    job.stage = "cancelled"
    job.finished_at = clock()
    session.commit()
