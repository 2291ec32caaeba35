"""The official record's ``status``, from the portal's states: one mapping, in one place.

The official service names ``COMPLIANCE_CHECKING`` (waiting for or under the Week 0
checks), ``REVIEW_PENDING`` (in review, Weeks 1–6 and a dispute), ``FINALIZED``,
``PUBLISHED`` and ``WITHDRAWN`` (rules §11.1); the portal adds the states the official
documents leave out and the rules' superset names: ``REJECTED`` (the checks or the intake
refused it), ``INVALIDATED``, and ``COMPLIANCE_PASSED`` for a test submission, which is
checked but never reviewed nor published.
"""

from __future__ import annotations

import enum

from app.core.lifecycle import SubmissionState


class OfficialStatus(enum.StrEnum):
    COMPLIANCE_CHECKING = "COMPLIANCE_CHECKING"
    COMPLIANCE_PASSED = "COMPLIANCE_PASSED"
    REJECTED = "REJECTED"
    REVIEW_PENDING = "REVIEW_PENDING"
    FINALIZED = "FINALIZED"
    PUBLISHED = "PUBLISHED"
    WITHDRAWN = "WITHDRAWN"
    INVALIDATED = "INVALIDATED"


_CHECKING = frozenset(
    {SubmissionState.RECEIVED, SubmissionState.CHECKING, SubmissionState.CHECK_ERROR}
)


def official_status(
    state: SubmissionState | None,
    *,
    for_review: bool = True,
    published: bool = False,
    withdrawn: bool = False,
    refused: bool = False,
) -> OfficialStatus:
    """*state*: the portal submission's, None while the bundle has not been taken;
    *published*: its result is in the public record; *withdrawn*: withdrawn before its
    bundle came; *refused*: its bundle was refused at intake."""
    if withdrawn:
        return OfficialStatus.WITHDRAWN
    if state is None:
        return OfficialStatus.REJECTED if refused else OfficialStatus.COMPLIANCE_CHECKING
    if state in _CHECKING:
        return OfficialStatus.COMPLIANCE_CHECKING
    if state == SubmissionState.PASSED_CHECKS:
        return OfficialStatus.REVIEW_PENDING if for_review else OfficialStatus.COMPLIANCE_PASSED
    if state == SubmissionState.FINALIZED:
        return OfficialStatus.PUBLISHED if published else OfficialStatus.FINALIZED
    return {
        SubmissionState.REJECTED: OfficialStatus.REJECTED,
        SubmissionState.WITHDRAWN: OfficialStatus.WITHDRAWN,
        SubmissionState.INVALIDATED: OfficialStatus.INVALIDATED,
    }[state]
