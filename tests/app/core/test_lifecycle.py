from __future__ import annotations

import pytest

from app.core.lifecycle import (
    IllegalTransition,
    ResultStatus,
    result_status,
    transition,
)
from app.core.lifecycle import (
    SubmissionState as S,
)


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (S.RECEIVED, S.CHECKING),
        (S.CHECKING, S.PASSED_CHECKS),
        (S.CHECKING, S.REJECTED),
        (S.CHECKING, S.CHECK_ERROR),
        (S.CHECKING, S.CHECKING),
        (S.CHECK_ERROR, S.CHECKING),
        (S.CHECK_ERROR, S.WITHDRAWN),
        (S.PASSED_CHECKS, S.CHECKING),
        (S.PASSED_CHECKS, S.FINALIZED),  # the chair's decisions in review
        (S.PASSED_CHECKS, S.REJECTED),
        (S.PASSED_CHECKS, S.WITHDRAWN),
        (S.FINALIZED, S.WITHDRAWN),
        (S.FINALIZED, S.INVALIDATED),
    ],
)
def test_allowed_transitions(current: S, target: S) -> None:
    assert transition(current, target) == target


@pytest.mark.parametrize(
    ("current", "target"),
    [
        (S.RECEIVED, S.PASSED_CHECKS),
        (S.RECEIVED, S.REJECTED),
        (S.REJECTED, S.PASSED_CHECKS),
        (S.REJECTED, S.CHECKING),  # terminal: resubmit as new (rules §11.1)
        (S.REJECTED, S.FINALIZED),
        (S.CHECK_ERROR, S.PASSED_CHECKS),
        (S.PASSED_CHECKS, S.RECEIVED),
        (S.PASSED_CHECKS, S.INVALIDATED),  # only a published, finalized result is invalidated
        (S.FINALIZED, S.CHECKING),
        (S.WITHDRAWN, S.CHECKING),
        (S.INVALIDATED, S.FINALIZED),
    ],
)
def test_illegal_transitions_say_what_was_tried(current: S, target: S) -> None:
    with pytest.raises(IllegalTransition) as error:
        transition(current, target)
    assert current.value in str(error.value) and target.value in str(error.value)


def test_statuses() -> None:
    assert result_status(S.PASSED_CHECKS, for_review=True) == ResultStatus.PROVISIONAL
    assert result_status(S.PASSED_CHECKS, for_review=False) == ResultStatus.UNVERIFIED
    assert result_status(S.FINALIZED, for_review=True) == ResultStatus.VERIFIED
    for state in (S.RECEIVED, S.CHECKING, S.REJECTED, S.CHECK_ERROR, S.WITHDRAWN, S.INVALIDATED):
        assert result_status(state, for_review=True) is None


def test_a_result_is_badged_verified_only_once_published_and_never_provisional_in_confidence() -> (
    None
):
    from app.core.lifecycle import PublicationMode, SubmissionState, status_badge
    from app.core.policy import StatusMapping

    review, final = SubmissionState.PASSED_CHECKS, SubmissionState.FINALIZED
    confidential, provisional = PublicationMode.CONFIDENTIAL, PublicationMode.PROVISIONAL
    shipped = StatusMapping()
    assert status_badge(review, True, confidential, (), shipped) == "confidential"
    assert status_badge(review, True, provisional, (), shipped) == "provisional"
    assert status_badge(review, False, confidential, (), shipped) == "unverified"
    # Verified means finalized and published (architecture, decision 7).
    assert status_badge(final, True, confidential, (), shipped) == "finalized"
    assert status_badge(final, True, provisional, ("provisional",), shipped) == "finalized"
    assert status_badge(final, True, confidential, ("verified",), shipped) == "verified"
    assert status_badge(SubmissionState.REJECTED, True, confidential, (), shipped) is None
    # The other reading of "unverified" (rules §11.11): a result in confidential review;
    # an upload outside review is then unlisted unless it was public before.
    other = StatusMapping(unverified="confidential-review")
    assert status_badge(review, True, confidential, (), other) == "unverified"
    assert status_badge(review, False, confidential, (), other) == "unlisted"
    assert status_badge(review, False, confidential, ("unverified",), other) == "unverified"
    assert status_badge(review, True, provisional, (), other) == "provisional"
