"""Dispute resolution (rules §11.6, SR §9, a proposal pending ratification): objections
still open after Week 6. The chair certifies them and names a panel of neutral members;
the parties file written statements; the panel convenes and recommends (uphold, dismiss,
or investigate, with one extension); the chair decides, bindingly; either side may appeal
to the Head of MLPerf within 14 days. A silent objector's objection lapses; a silent
submitter keeps accruing penalties and is withdrawn 10 business days past the deadline.

Pure: the deadlines from the moments that start them, and who may act when.
"""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass

from app.core.authorization import Action, Actor, may
from app.core.clocks import ReviewClock
from app.core.policy import DisputeTerms
from app.core.refusals import Kind, Refusal


class Recommendation(enum.StrEnum):
    UPHOLD = "uphold"
    DISMISS = "dismiss"
    INVESTIGATE = "investigate"


class Ruling(enum.StrEnum):
    """The chair's binding decision on the disputed objections."""

    UPHOLD = "uphold"
    DISMISS = "dismiss"


@dataclass(frozen=True)
class DisputeFacts:
    """What the deadlines rest on; None where the step has not happened."""

    opened_at: dt.datetime  # Week 6 closed with objections open
    certified_at: dt.datetime | None = None
    convened_at: dt.datetime | None = None
    recommended_at: dt.datetime | None = None
    recommendation: str | None = None
    extended: bool = False
    decided_at: dt.datetime | None = None
    appealed_at: dt.datetime | None = None


@dataclass(frozen=True)
class Deadlines:
    certify_by: dt.datetime
    statements_by: dt.datetime | None
    convene_by: dt.datetime | None
    recommend_by: dt.datetime | None
    decide_by: dt.datetime | None
    silent_submitter_withdrawn_at: dt.datetime | None
    appeal_by: dt.datetime | None


def deadlines(clock: ReviewClock, facts: DisputeFacts, terms: DisputeTerms) -> Deadlines:
    """Each step's deadline, once the step before it has happened."""

    def after(start: dt.datetime | None, days: int) -> dt.datetime | None:
        return clock.business_deadline(start, days) if start is not None else None

    statements = after(facts.certified_at, terms.statements_business_days)
    recommend = after(facts.convened_at, terms.recommend_business_days)
    if recommend is not None and facts.extended:
        recommend = clock.business_deadline(recommend, terms.extension_business_days)
    return Deadlines(
        certify_by=clock.business_deadline(facts.opened_at, terms.certify_business_days),
        statements_by=statements,
        convene_by=after(facts.certified_at, terms.convene_business_days),
        recommend_by=recommend,
        decide_by=after(facts.recommended_at, terms.decide_business_days),
        silent_submitter_withdrawn_at=after(statements, terms.silent_submitter_business_days),
        appeal_by=(
            clock.end_of(clock.local_date(facts.decided_at) + dt.timedelta(days=terms.appeal_days))
            if facts.decided_at is not None
            else None
        ),
    )


def may_certify(actor: Actor, facts: DisputeFacts | None, panel_size: int) -> Refusal | None:
    if (refusal := may(actor, Action.DECIDE)) is not None:
        return refusal
    if facts is None:
        return Refusal(
            "no-dispute", "objections become a dispute when Week 6 closes with them open"
        )
    if facts.certified_at is not None:
        return Refusal("certified", "the dispute is certified already")
    if panel_size < 1:
        return Refusal(
            "panel-required", "name the panel: at least one neutral member", Kind.INVALID
        )
    return None


def may_recommend(on_panel: bool, facts: DisputeFacts | None) -> Refusal | None:
    if not on_panel:
        return Refusal("not-on-panel", "only the dispute's panel recommends", Kind.FORBIDDEN)
    assert facts is not None  # a panel exists only once certified
    if facts.decided_at is not None:
        return Refusal("decided", "the chair has decided the dispute")
    if facts.recommendation is not None and facts.recommendation != Recommendation.INVESTIGATE:
        return Refusal("recommended", "the panel has recommended already")
    return None


def may_extend(actor: Actor, facts: DisputeFacts | None) -> Refusal | None:
    """One extension, for an investigation the panel recommended."""
    if (refusal := may(actor, Action.DECIDE)) is not None:
        return refusal
    if facts is None or facts.recommendation != Recommendation.INVESTIGATE:
        return Refusal("not-investigating", "an extension is for an investigation the panel asked")
    if facts.extended:
        return Refusal("extended", "the dispute has had its one extension")
    return None


def may_rule(actor: Actor, facts: DisputeFacts | None, backstop_passed: bool) -> Refusal | None:
    """The chair decides on the panel's recommendation, or on the record once the
    backstop has passed."""
    if (refusal := may(actor, Action.DECIDE)) is not None:
        return refusal
    if facts is None or facts.certified_at is None:
        return Refusal("not-certified", "certify the dispute and name its panel first")
    if facts.decided_at is not None:
        return Refusal("decided", "the dispute is decided")
    if facts.recommendation in (None, Recommendation.INVESTIGATE) and not backstop_passed:
        return Refusal(
            "awaiting-panel",
            "the chair decides on the panel's recommendation (or on the record after the "
            "8-week backstop)",
        )
    return None


def may_appeal(party: bool, facts: DisputeFacts | None, now: dt.datetime,
               appeal_by: dt.datetime | None) -> Refusal | None:  # fmt: skip
    if not party:
        return Refusal("not-a-party", "only the submitter or an objector appeals", Kind.FORBIDDEN)
    if facts is None or facts.decided_at is None or appeal_by is None:
        return Refusal("not-decided", "an appeal follows the chair's decision")
    if facts.appealed_at is not None:
        return Refusal("appealed", "the decision is under appeal already")
    if now > appeal_by:
        return Refusal("appeal-closed", f"appeals closed on {appeal_by.date()} (14 days)")
    return None
