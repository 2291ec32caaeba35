"""The official record's status from the portal's states (one mapping), and which CLI
the Submission API takes."""

from __future__ import annotations

import pytest

from app.core.lifecycle import SubmissionState
from app.submission_api.domain.status import OfficialStatus, official_status
from app.submission_api.domain.versions import UPGRADE_COMMAND, too_old


@pytest.mark.parametrize(
    ("state", "kwargs", "status"),
    [
        (None, {}, OfficialStatus.COMPLIANCE_CHECKING),  # awaiting its bundle
        (None, {"refused": True}, OfficialStatus.REJECTED),  # the intake refused it
        (None, {"withdrawn": True}, OfficialStatus.WITHDRAWN),
        (SubmissionState.RECEIVED, {}, OfficialStatus.COMPLIANCE_CHECKING),
        (SubmissionState.CHECKING, {}, OfficialStatus.COMPLIANCE_CHECKING),
        (SubmissionState.CHECK_ERROR, {}, OfficialStatus.COMPLIANCE_CHECKING),
        (SubmissionState.REJECTED, {}, OfficialStatus.REJECTED),
        (SubmissionState.PASSED_CHECKS, {}, OfficialStatus.REVIEW_PENDING),
        (SubmissionState.PASSED_CHECKS, {"for_review": False}, OfficialStatus.COMPLIANCE_PASSED),
        (SubmissionState.FINALIZED, {}, OfficialStatus.FINALIZED),
        (SubmissionState.FINALIZED, {"published": True}, OfficialStatus.PUBLISHED),
        (SubmissionState.WITHDRAWN, {}, OfficialStatus.WITHDRAWN),
        (SubmissionState.INVALIDATED, {}, OfficialStatus.INVALIDATED),
    ],
)
def test_each_portal_state_has_one_official_name(
    state: SubmissionState | None, kwargs: dict[str, bool], status: OfficialStatus
) -> None:
    assert official_status(state, **kwargs) == status


def test_every_portal_state_is_mapped() -> None:
    for state in SubmissionState:
        assert official_status(state) in OfficialStatus


@pytest.mark.parametrize(
    ("cli", "minimum", "refused"),
    [
        ("1.5.3.0", "1.5", False),
        ("1.5.0.0", "1.5", False),  # major.minor only, as the official service
        ("1.6.0.0", "1.5", False),
        ("1.4.9.9", "1.5", True),
        ("0.9", "1.5", True),
        (None, "1.5", False),  # an older client names no version: not judged
    ],
)
def test_a_cli_older_than_the_required_major_minor_is_told_to_upgrade(
    cli: str | None, minimum: str, refused: bool
) -> None:
    detail = too_old(cli, minimum)
    assert (detail is not None) == refused
    if detail is not None:
        assert "1.5.x" in detail and UPGRADE_COMMAND in detail
