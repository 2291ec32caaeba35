"""Submission states for intake and the automated (Week 0) checks.

``received → checking → rejected | passed_checks``; a check that cannot run at all
ends in ``check_error`` with its reason and can be retried. Re-checking a finished
submission (after a checker upgrade, say) goes through ``checking`` again. The review
states of rules §11.1 extend this machine.
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.policy import StatusMapping


class SubmissionState(enum.StrEnum):
    RECEIVED = "received"
    CHECKING = "checking"
    REJECTED = "rejected"
    PASSED_CHECKS = "passed_checks"
    CHECK_ERROR = "check_error"
    # Peer review finished and the chair finalized the results (rules §11.1); the review
    # states in between come with the review workflow.
    FINALIZED = "finalized"
    # Chair decisions (rules §11.7, §11.8): withdrawn before or after finalization, or
    # invalidated after publication; published results keep an archive entry with the tag.
    WITHDRAWN = "withdrawn"
    INVALIDATED = "invalidated"


class PublicationMode(enum.StrEnum):
    """Rules §11.2, chosen at upload and irrevocable (an embargo date may come with either)."""

    CONFIDENTIAL = "confidential"  # public once finalized
    PROVISIONAL = "provisional"  # public as "peer review pending" from its cohort


class IllegalTransition(Exception):
    def __init__(self, current: SubmissionState, target: SubmissionState) -> None:
        super().__init__(f"a submission cannot go from {current} to {target}")
        self.current = current
        self.target = target


_ALLOWED: dict[SubmissionState, frozenset[SubmissionState]] = {
    SubmissionState.RECEIVED: frozenset({SubmissionState.CHECKING}),
    # checking → checking: a redelivered job starts its run again.
    SubmissionState.CHECKING: frozenset(
        {
            SubmissionState.CHECKING,
            SubmissionState.REJECTED,
            SubmissionState.PASSED_CHECKS,
            SubmissionState.CHECK_ERROR,
        }
    ),
    SubmissionState.CHECK_ERROR: frozenset({SubmissionState.CHECKING, SubmissionState.WITHDRAWN}),
    # Terminal (rules §11.1): a rejected submission is resubmitted as a new one.
    SubmissionState.REJECTED: frozenset(),
    SubmissionState.PASSED_CHECKS: frozenset(
        {
            SubmissionState.CHECKING,
            SubmissionState.FINALIZED,
            SubmissionState.REJECTED,  # the chair rejects it in review
            SubmissionState.WITHDRAWN,
        }
    ),
    SubmissionState.FINALIZED: frozenset({SubmissionState.WITHDRAWN, SubmissionState.INVALIDATED}),
    SubmissionState.WITHDRAWN: frozenset(),
    SubmissionState.INVALIDATED: frozenset(),
}

#: The chair's decisions and the state each one leads to.
DECISIONS: dict[str, SubmissionState] = {
    "finalize": SubmissionState.FINALIZED,
    "reject": SubmissionState.REJECTED,
    "withdraw": SubmissionState.WITHDRAWN,
    "invalidate": SubmissionState.INVALIDATED,
}

#: States that are never left (rules §11.1, §11.7).
TERMINAL = frozenset(
    {SubmissionState.REJECTED, SubmissionState.WITHDRAWN, SubmissionState.INVALIDATED}
)

FINISHED = frozenset(
    {
        SubmissionState.REJECTED,
        SubmissionState.PASSED_CHECKS,
        SubmissionState.CHECK_ERROR,
        SubmissionState.FINALIZED,
        SubmissionState.WITHDRAWN,
        SubmissionState.INVALIDATED,
    }
)


def transition(current: SubmissionState, target: SubmissionState) -> SubmissionState:
    if target not in _ALLOWED[current]:
        raise IllegalTransition(current, target)
    return target


class ResultStatus(enum.StrEnum):
    """How a result is labelled on charts (architecture, decision 7)."""

    VERIFIED = "verified"
    PROVISIONAL = "provisional"
    UNVERIFIED = "unverified"


class RecordStatus(enum.StrEnum):
    """What a version of the public record says of a result: its chart status, or the
    archive's tag of a result that left the record (rules §11.7)."""

    VERIFIED = "verified"
    PROVISIONAL = "provisional"
    UNVERIFIED = "unverified"
    WITHDRAWN = "withdrawn"
    INVALIDATED = "invalidated"
    # A Preview result that expired without its Available result or an extension: removed
    # at the next cohort, not archived; this entry says so, and why (rules §11.10).
    REMOVED = "removed"


class PointState(enum.StrEnum):
    """A point under review (rules §11.1): a faulty one is withdrawn, held in dispute, or
    after finalization invalidated; only active points shape a curve."""

    ACTIVE = "active"
    WITHDRAWN = "withdrawn"
    DISPUTED = "disputed"
    INVALIDATED = "invalidated"


TERMINAL_POINT_STATES = frozenset({PointState.WITHDRAWN, PointState.INVALIDATED})


def result_status(state: SubmissionState, for_review: bool) -> ResultStatus | None:
    """The status a submission's results carry (architecture, decision 7), or None.

    Not for review: unverified. Finalized by peer review: verified. Passed the automated
    checks and awaiting review: provisional ("peer review pending"). Rejected results are
    never charted.
    """
    if state not in (SubmissionState.PASSED_CHECKS, SubmissionState.FINALIZED):
        return None
    if not for_review:
        return ResultStatus.UNVERIFIED
    return ResultStatus.VERIFIED if state == SubmissionState.FINALIZED else ResultStatus.PROVISIONAL


FINALIZED_BADGE = "finalized"
UNLISTED_BADGE = "unlisted"


def status_badge(
    state: SubmissionState,
    for_review: bool,
    mode: PublicationMode,
    public: Collection[str],
    statuses: StatusMapping,
) -> str | None:
    """The status a page shows on a submission: its results' status, except that a result
    in confidential review is "confidential" (it is provisional, "peer review pending",
    only in provisional publication mode; "unverified" where the policy reads the word so),
    a finalized one is "verified" only once a cohort published it as verified, "finalized"
    until then, and an upload outside review that the policy keeps off the record is
    "unlisted" (architecture, decision 7; rules §11.11). *public*: the statuses of its
    versions in the record."""
    status = result_status(state, for_review)
    if status == ResultStatus.PROVISIONAL and mode == PublicationMode.CONFIDENTIAL:
        return statuses.confidential_badge
    if status == ResultStatus.VERIFIED and ResultStatus.VERIFIED not in public:
        return FINALIZED_BADGE
    if status == ResultStatus.UNVERIFIED and statuses.keeps_private(was_public=bool(public)):
        return UNLISTED_BADGE
    return status.value if status else None


# A background job's states (app/jobs): the database keeps them, the worker moves them.
class JobState(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLING = "cancelling"  # asked to stop; the running job stops at its next report
    CANCELLED = "cancelled"  # a re-count stopped by the one who asked for it
    # Waiting for the jobs it started (its children) to finish; no worker holds it, and
    # it is queued again when the last child succeeds (app/jobs/queue.py).
    WAITING = "waiting"


# A job in one of these has nothing more to do; in any other it is still under way.
ENDED_JOB_STATES = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})


class ReviewPhase(enum.StrEnum):
    # Provisional publication (with or without embargo) or an embargo on review:
    # checks passed, the clocks have not started (rules §11.2).
    AWAITING = "awaiting_review"
    PEER_REVIEW = "peer_review"  # Weeks 1–3: objections may be filed
    OBJECTION_RESOLUTION = "objection_resolution"  # Weeks 4–6
    DISPUTE = "dispute"  # open objections after Week 6 (rules §11.6)
    CLOSED = "closed"  # finalized, withdrawn or rejected


class ObjectionState(enum.StrEnum):
    OPEN = "open"  # awaiting the submitter's answer (the penalty clock runs)
    ANSWERED = "answered"  # awaiting the objectors (their clock runs)
    UNRESOLVED = "unresolved"  # objectors not satisfied: the submitter answers again
    # The objectors gave a validation schedule (rules §11.3): they will validate the
    # submitter's answer; their silence no longer retracts the objection.
    VALIDATING = "validating"
    RESOLVED = "resolved"
    RETRACTED = "retracted"


# A correction of a submission's non-result content (rules §11.7,
# app.review.domain.corrections): checked, then applied at once in review, or asked of the
# chair after finalization.
class CorrectionState(enum.StrEnum):
    CHECKING = "checking"  # its bundle is in the official checks
    REQUESTED = "requested"  # checked; after finalization it waits for the chair
    APPROVED = "approved"  # by the chair: applied once its checks run again
    APPLIED = "applied"  # the submission's bundle now
    REFUSED = "refused"  # its checks failed, or it came too late
    DECLINED = "declined"  # the chair said no


#: A correction not yet decided: one at a time per submission.
UNDECIDED_CORRECTIONS = frozenset(
    {CorrectionState.CHECKING, CorrectionState.REQUESTED, CorrectionState.APPROVED}
)


# A fraud report (rules §11.5, app.review.domain.fraud): screened, then decided.
class FraudState(enum.StrEnum):
    SCREENING = "screening"
    DECIDED = "decided"


class Screening(enum.StrEnum):
    """A screener's finding."""

    SUBSTANTIATED = "substantiated"
    UNSUBSTANTIATED = "unsubstantiated"


class FraudOutcome(enum.StrEnum):
    INVALID = "invalid"  # the report does not hold
    RECLASSIFIED = "reclassified"  # moved to a lower division or status
    REMOVED = "removed"  # the result goes (invalidated, or rejected in review)
