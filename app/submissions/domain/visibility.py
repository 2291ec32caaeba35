"""Who sees what of a submission (rules §11.9): decided here, and only here.

The review committee and the submitting organisations see every result under review,
with its code and its artifacts; the review itself (objection threads, the timeline,
acting on it) is the committee's, the chair's and the submitting organisation's of that
submission. A "submitting organisation" is read narrowly: one with a submission for
review (never an unverified or test upload) that passed its checks and is itself in its
review weeks (1–6, peer review and objection resolution), and it sees another
submission's results, code and artifacts only while that one is in its review weeks too.
An upload the checks reject, a submission before or after its review, or one withheld by
its embargo gives no such standing and is seen by no such peer. The public sees what was
published: results with their code and artifacts once finalized (or uploaded not for
review), the results alone while a provisional publication is "peer review pending",
and the archive entry of a result withdrawn or invalidated after finalization. The
review record (objection threads, the timeline with the committee's names) is never
public. Nothing else exists for the public.
"""

from __future__ import annotations

import enum

from app.core.lifecycle import ReviewPhase, SubmissionState

# Weeks 1–6 of the review (rules §11.3): the weeks in which submitters see each other's.
REVIEW_WEEKS = frozenset({ReviewPhase.PEER_REVIEW, ReviewPhase.OBJECTION_RESOLUTION})


class Access(enum.IntEnum):
    NONE = 0  # as if it did not exist
    RESULTS = 1  # the curves and the summary
    FULL = 2  # and the findings, the code, the artifacts
    REVIEW = 3  # and the review itself: objections, the timeline, who reviewed, acting on it


class Viewer(enum.StrEnum):
    PUBLIC = "public"  # anonymous, a token without the submit/review scope, a non-submitter
    PEER = "peer"  # a member of another submitting organisation
    MEMBER = "member"  # the submission's own organisation, the review committee, the chair


_PUBLIC_ACCESS = {
    "verified": Access.FULL,
    "unverified": Access.FULL,
    "provisional": Access.RESULTS,
    "withdrawn": Access.RESULTS,
    "invalidated": Access.RESULTS,
}


def access(viewer: Viewer, public_status: str | None) -> Access:
    """*public_status*: the status of the submission's latest publication, if any."""
    if viewer == Viewer.MEMBER:
        return Access.REVIEW
    if viewer == Viewer.PEER:
        return Access.FULL
    if public_status is None:
        return Access.NONE
    return _PUBLIC_ACCESS.get(public_status, Access.NONE)


def in_review_weeks(state: SubmissionState, for_review: bool, phase: ReviewPhase | None) -> bool:
    """A submission for review that passed its checks and is in weeks 1–6 of its review:
    what makes its organisation a submitting organisation (rules §11.9), and what another
    submitting organisation may see."""
    return for_review and state == SubmissionState.PASSED_CHECKS and phase in REVIEW_WEEKS
