"""Reports of fraud or misrepresentation (rules §11.5, SR §8.4): any member may file one
at any time, outside the objection windows; the chair and at least two neutral members
screen it; the chair decides its outcome: an invalid report, a move to a lower division
or publication status (a reclassification), or removal of the result.

Pure: who may act on a report, when, and what each outcome does to the submission.
"""

from __future__ import annotations

from app.core.authorization import Action, Actor, may
from app.core.lifecycle import TERMINAL, FraudState, SubmissionState
from app.core.refusals import Refusal
from app.review.domain.policy import SubmissionFacts


def may_report_fraud(actor: Actor, facts: SubmissionFacts) -> Refusal | None:
    if (refusal := may(actor, Action.REPORT_FRAUD)) is not None:
        return refusal
    if facts.state in TERMINAL:
        return Refusal("closed", f"the submission is {facts.state}: there is nothing to report")
    if facts.state in (SubmissionState.RECEIVED, SubmissionState.CHECKING):
        return Refusal("checks-running", "wait for the automated checks to finish")
    return None


def may_screen(actor: Actor, state: FraudState, screened: bool) -> Refusal | None:
    """A neutral member screens an undecided report, once."""
    if (refusal := may(actor, Action.SCREEN_FRAUD)) is not None:
        return refusal
    if state != FraudState.SCREENING:
        return Refusal("decided", "the report is decided already")
    if screened:
        return Refusal("screened", "you have screened this report already")
    return None


def may_decide_report(
    actor: Actor, state: FraudState, neutral_screenings: int, required: int
) -> Refusal | None:
    """The chair decides once *required* neutral members (the policy's) have screened
    the report."""
    if (refusal := may(actor, Action.DECIDE)) is not None:
        return refusal
    if state != FraudState.SCREENING:
        return Refusal("decided", "the report is decided already")
    if neutral_screenings < required:
        return Refusal(
            "screening-incomplete",
            f"{neutral_screenings} of the {required} neutral members have screened "
            "the report: the chair decides with them (rules §11.5)",
        )
    return None


def removal_decision(facts: SubmissionFacts) -> str:
    """The chair's decision that removes a result found fraudulent: invalidated once
    finalized (the archive keeps it, tagged), rejected in review, else withdrawn."""
    if facts.state == SubmissionState.FINALIZED:
        return "invalidate"
    if facts.state == SubmissionState.PASSED_CHECKS and facts.for_review:
        return "reject"
    return "withdraw"
