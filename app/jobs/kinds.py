"""What a kind of background job is: what runs it, what marks it failed, the worker task
that carries it, and what it is doing (for the failure message).

The features declare their kinds (``app/runs/services/jobs.py``, the checks' in
``app/pipeline.py``, as a passing check leads on to review and the re-counts); the
registry of them all is ``app.pipeline.JOB_KINDS``, which the worker makes one task each
of and recovery fails a job through. This package knows no feature.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.jobs.queue import VERDICT_QUEUE, WORK_QUEUE, task_name

# run(session=, settings=, job_id=, queue=): one job, start to end.
RunJob = Callable[..., Any]
# fail(session=, job=, reason=, clock=): the job, and the work it was for, failed.
FailJob = Callable[..., None]
# tidy(session=, settings=): what each recovery round clears up for the kind.
TidyJobs = Callable[..., None]


@dataclass(frozen=True)
class JobKind:
    name: str  # the value of Job.kind
    doing: str  # "internal error while <doing>"
    run: RunJob
    fail: FailJob
    tidy: TidyJobs | None = None
    verdict: bool = False  # a person waits on it for a verdict: the verdicts' queue

    @property
    def task(self) -> str:
        return task_name(self.name)

    @property
    def queue(self) -> str:
        return VERDICT_QUEUE if self.verdict else WORK_QUEUE


def queues_of(kinds: dict[str, JobKind]) -> dict[str, str]:
    """Each kind's queue by its name, as the job queue sends to them."""
    return {name: kind.queue for name, kind in kinds.items()}


def registry(*kinds: JobKind) -> dict[str, JobKind]:
    """The kinds by name; a name given twice is a mistake, refused at start."""
    named: dict[str, JobKind] = {}
    for kind in kinds:
        if kind.name in named:
            raise ValueError(f"job kind {kind.name!r} is declared twice")
        named[kind.name] = kind
    return named
