"""Who sees what of a submission (rules §11.9): decided here, and only here.

The review committee and the submitting organisations see every result, with its code,
its artifacts and its review, during review and after. The public sees what was
published: results with their code and artifacts once finalized (or uploaded not for
review), the results alone while a provisional publication is "peer review pending",
and the archive entry of a result withdrawn or invalidated after finalization. The
review record (objection threads, the timeline with the committee's names) is never
public. Nothing else exists for the public.
"""

from __future__ import annotations

import enum


class Access(enum.IntEnum):
    NONE = 0  # as if it did not exist
    RESULTS = 1  # the curves and the summary
    FULL = 2  # and the findings, the code, the artifacts
    REVIEW = 3  # and the review itself: objections, the timeline, who reviewed, acting on it


class Viewer(enum.StrEnum):
    PUBLIC = "public"  # anonymous, or a token without the submit/review scope
    MEMBER = "member"  # a submitting organisation's member or the review committee


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
    if public_status is None:
        return Access.NONE
    return _PUBLIC_ACCESS.get(public_status, Access.NONE)
