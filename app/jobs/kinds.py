"""Every kind of background job, in one registry: what runs it, what marks it failed,
the worker task that carries it, and what it is doing (for the failure message).

The worker registers one task per kind from here, the queue sends to the kind's task,
and recovery fails a job that is out of attempts through its kind: adding a kind is one
entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.checks.services.checks import fail_check, run_checks
from app.jobs.queue import CHECK_SUBMISSION, JobQueue, task_name
from app.runs.services.recount_parts import (
    RECOUNT_PART,
    remove_unwanted_counts,
    run_recount_part,
)
from app.runs.services.reproductions import REPRODUCE_POINT, fail_reproduction, run_reproduction
from app.runs.services.retokenization import (
    RETOKENIZE_POINT,
    fail_recount_part,
    fail_retokenization,
    run_retokenization,
)
from app.settings import Settings

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

    @property
    def task(self) -> str:
        return task_name(self.name)


def _without_queue(run: RunJob) -> RunJob:
    def call(*, session: Session, settings: Settings, job_id: int, queue: JobQueue) -> Any:
        return run(session=session, settings=settings, job_id=job_id)

    return call


JOB_KINDS: dict[str, JobKind] = {
    kind.name: kind
    for kind in (
        # A passing check queues the re-counts of its points next, hence the queue; a
        # re-count queues its parts, and the last part its merge.
        JobKind(CHECK_SUBMISSION, "checking", run_checks, fail_check),
        JobKind(RETOKENIZE_POINT, "re-counting tokens", run_retokenization, fail_retokenization),
        JobKind(
            RECOUNT_PART, "counting a part of a point's events", run_recount_part,
            fail_recount_part, tidy=remove_unwanted_counts,
        ),
        JobKind(
            REPRODUCE_POINT, "reproducing", _without_queue(run_reproduction), fail_reproduction
        ),
    )
}  # fmt: skip
