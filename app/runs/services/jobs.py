"""The runs feature's kinds of background job: re-counts, their parts, reproductions."""

from __future__ import annotations

from app.jobs.kinds import JobKind
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

# A re-count queues its parts, and the last part its merge, hence their queue.
RUNS_JOB_KINDS = (
    JobKind(RETOKENIZE_POINT, "re-counting tokens", run_retokenization, fail_retokenization),
    JobKind(
        RECOUNT_PART,
        "counting a part of a point's events",
        run_recount_part,
        fail_recount_part,
        tidy=remove_unwanted_counts,
    ),
    # A run that finds its endpoint busy puts itself back in the queue.
    JobKind(REPRODUCE_POINT, "reproducing", run_reproduction, fail_reproduction),
)
