"""A large point's re-count split across workers.

The point's job (``retokenize_point``) plans: a stored events file larger than
``retokenize_split_bytes`` is counted in parts (``harness/ranges.py``), one
``recount_part`` job each, and the point's job waits for them (``JobState.WAITING``).
Each part counts its own lines with the reference tokenizer and saves the counts under
the data dir, which the workers share as they share the events. When the last part is
in, the point's job runs again and computes everything in one pass over the events with
the parts' counts in place of a tokenizer: the numbers one worker counting the whole
file gives.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
from pathlib import Path

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
from app.submissions.services.artifacts import events_path
from harness.loadgen import file_sha256
from harness.ranges import PartCounts, Precounted, count_part
from harness.tokens import TokenizerNotFound, load_counter, load_registry

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


def _counts_dir(settings: Settings, retok: Retokenization) -> Path:
    return settings.recount_parts_dir / retok.public_id


def _counts_file(settings: Settings, retok: Retokenization, part: RecountPart) -> Path:
    return _counts_dir(settings, retok) / f"{part.part}-of-{part.parts}.npz"


def merged_counts(
    settings: Settings, retok: Retokenization, parts: list[RecountPart]
) -> Precounted:
    """Every part's saved counts, each checked against the hash its job recorded."""
    loaded = []
    for part in parts:
        path = _counts_file(settings, retok, part)
        label = f"part {part.part + 1} of {part.parts}"
        if not path.is_file():
            raise PartsUnusable(f"the counts of {label} are missing from storage")
        if file_sha256(path) != part.counts_sha256:
            raise PartsUnusable(f"the counts of {label} are not the file its job saved")
        loaded.append(PartCounts.load(path))
    return Precounted(loaded)


def remove_counts(settings: Settings, retok: Retokenization) -> None:
    """The parts' files, once merged."""
    shutil.rmtree(_counts_dir(settings, retok), ignore_errors=True)


def remove_unwanted_counts(*, session: Session, settings: Settings) -> None:
    """Parts' files no re-count will merge any more (it failed, was cancelled, or is
    gone): the recovery round removes them."""
    if not settings.recount_parts_dir.is_dir():
        return
    for folder in settings.recount_parts_dir.iterdir():
        retok = session.scalar(
            select(Retokenization).where(Retokenization.public_id == folder.name)
        )
        if retok is None or retok.finished_at is not None:
            shutil.rmtree(folder, ignore_errors=True)


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
    target = _counts_file(settings, retok, part)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    counts.save(partial)
    partial.replace(target)  # a reader never sees half a file
    part.counts_sha256 = file_sha256(target)
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
