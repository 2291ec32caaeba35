"""Who may do what to a submission, and when: the one home of the lifecycle's rules.

Every predicate answers ``None`` (allowed) or a :class:`Refusal` that says why not, so a
page can explain an action it does not offer and a service can refuse the same action
with the same words. Pages, the API and the services all ask here (architecture,
decision 12); nothing re-derives these rules.

Rules: ``../spec/rules.md`` §4.1 (cohort timing), §4.2 (embargo changes), §5.2 (point
counts), §11.1 (terminal states), §11.3–§11.5 (objection windows), §11.7 (withdrawal,
invalidation).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from app.core.authorization import Action, Actor, may
from app.core.clocks import ReviewClock
from app.core.cohorts import Cohort
from app.core.lifecycle import (
    TERMINAL,
    TERMINAL_POINT_STATES,
    PointState,
    PublicationMode,
    SubmissionState,
)
from app.core.refusals import Kind, Refusal
from app.core.regions import REGION_NAMES, REQUIRED_REGIONS
from app.submissions.domain.embargo import embargo_refusal


@dataclass(frozen=True)
class SubmissionFacts:
    """What the rules need to know of a submission."""

    state: SubmissionState
    for_review: bool = True
    mode: PublicationMode = PublicationMode.CONFIDENTIAL
    review_started: bool = False
    finalized_at: dt.datetime | None = None
    eligible_at: dt.datetime | None = None
    published: bool = False


# --- the submission as a whole -----------------------------------------------------------


def may_recheck(facts: SubmissionFacts) -> Refusal | None:
    """The automated checks run again after a check error, or before anything of the
    submission is reviewed or public (a checker upgrade, say). A rejected submission is
    resubmitted as new (rules §11.1); a reviewed or public one keeps its record."""
    if facts.state == SubmissionState.CHECK_ERROR:
        return None
    if facts.state in (SubmissionState.RECEIVED, SubmissionState.CHECKING):
        return Refusal("checks-running", "the checks of this submission are still running")
    if facts.state == SubmissionState.REJECTED:
        return Refusal(
            "rejected", "a rejected submission is final: upload a corrected bundle as a new one"
        )
    if facts.state in TERMINAL:
        return Refusal("closed", f"a {facts.state} submission is closed")
    if facts.review_started or facts.published or facts.state == SubmissionState.FINALIZED:
        return Refusal(
            "in-review",
            "the submission is in review or public: its checked results are the record now",
        )
    return None


def may_withdraw(actor: Actor, facts: SubmissionFacts) -> Refusal | None:
    """The submitting organisation (or the chair) withdraws at any time (rules §11.7)."""
    if (refusal := may(actor, Action.WITHDRAW)) is not None:
        return refusal
    if facts.state in TERMINAL:
        return Refusal("closed", f"a {facts.state} submission cannot be withdrawn")
    if facts.state in (SubmissionState.RECEIVED, SubmissionState.CHECKING):
        return Refusal("checks-running", "wait for the automated checks to finish")
    return None


def may_decide(action: str, facts: SubmissionFacts) -> Refusal | None:
    """The chair's reject and invalidate (finalize has its own conditions, withdraw is
    :func:`may_withdraw`): reject in review, invalidate after finalization."""
    if action == "reject":
        if facts.state != SubmissionState.PASSED_CHECKS or not facts.for_review:
            return Refusal(
                "not-allowed", f"only a submission in review is rejected, not a {facts.state} one"
            )
        return None
    if action == "invalidate":
        if facts.state != SubmissionState.FINALIZED:
            return Refusal(
                "not-allowed",
                "only a finalized result is invalidated; withdraw or reject it in review",
            )
        return None
    return Refusal("bad-decision", f"unknown decision {action!r}", Kind.INVALID)


def may_reclassify(facts: SubmissionFacts) -> Refusal | None:
    """The chair reclassifies a result in review or after finalization: the remedy of an
    upheld division or availability objection, a fraud finding or a failed audit (rules
    §11.4–§11.6, §8.4, §11.12). *What* it may become is the standing's rule
    (``app.publishing.domain.standing.remedy_problem``)."""
    if facts.state == SubmissionState.FINALIZED:
        return None
    if facts.state == SubmissionState.PASSED_CHECKS and facts.for_review:
        return None
    return Refusal(
        "not-allowed",
        f"only a result in review or finalized is reclassified, not a {facts.state} one",
    )


def may_change_embargo(
    actor: Actor,
    facts: SubmissionFacts,
    embargo: dt.date | None,
    today: dt.date | None,
    latest: dt.date | None = None,
) -> Refusal | None:
    """The embargo date may change after submission while it still holds something back
    (rules §4.2); *today* is the cohort time zone's date and *latest* the last date that
    can hold it (None: only who and when)."""
    if (refusal := may(actor, Action.CHANGE_EMBARGO)) is not None:
        return refusal
    if facts.state in TERMINAL:
        return Refusal("not-allowed", f"a {facts.state} submission has no embargo to change")
    if facts.mode == PublicationMode.PROVISIONAL and (facts.review_started or facts.published):
        return Refusal("not-allowed", "the provisional publication is out: its embargo has lifted")
    if facts.state == SubmissionState.FINALIZED and facts.published:
        return Refusal("not-allowed", "the finalized result is already public")
    if embargo is not None and today is not None:
        return embargo_refusal(embargo, today, latest or dt.date.max)
    return None


def may_object(
    clock: ReviewClock,
    facts: SubmissionFacts,
    now: dt.datetime,
    *,
    late_ground: bool,
    ground: str = "that ground",
    on_committee: bool = True,
    late: LateWindow,
) -> Refusal | None:
    """When an objection may be filed (rules §11.3–§11.5): during peer review (Weeks 1–3);
    after Week 6 and for 90 days after finalization only on the late grounds, and only by
    a review-committee member (*on_committee*: the filer's organisation holds a seat)
    while the *late* window lasts."""
    if facts.state == SubmissionState.FINALIZED and facts.finalized_at is not None:
        closes = late.closes(facts.finalized_at)
        if closes is not None and now > closes:
            return Refusal(
                "settled",
                f"the result is settled: late objections closed on {closes.date()}, the later "
                f"of {late.days} days after finalization and the next audit vote (rules §11.5)",
            )
        if not late_ground:
            return Refusal(
                "window-closed",
                "after review, objections rest only on availability, validity, model "
                f"equivalence or division rules, not {ground}",
            )
        return _late_standing(on_committee)
    if (
        facts.state != SubmissionState.PASSED_CHECKS
        or not facts.review_started
        or facts.eligible_at is None
    ):
        return Refusal("not-in-review", "objections are filed against a submission in review")
    if now <= clock.peer_review_closes(facts.eligible_at):
        return None
    if now > clock.resolution_closes(facts.eligible_at) and late_ground:
        return _late_standing(on_committee)
    return Refusal(
        "window-closed",
        "peer review (Weeks 1–3) is over: no new objections now, except on the late grounds "
        "after Week 6 (rules §11.3, §11.5)",
    )


@dataclass(frozen=True)
class LateWindow:
    """The late-objection window's terms (rules §11.5): its days after finalization (the
    policy's), the audit votes held, and whether a round's vote is still to come."""

    days: int
    votes: tuple[dt.datetime, ...] = ()
    vote_pending: bool = False

    def closes(self, finalized_at: dt.datetime) -> dt.datetime | None:
        """The later of the days after finalization and the first audit vote after it;
        None while that vote is still to come."""
        days = finalized_at + dt.timedelta(days=self.days)
        vote = min((v for v in self.votes if v > finalized_at), default=None)
        if vote is None:
            return None if self.vote_pending else days
        return max(days, vote)


def _late_standing(on_committee: bool) -> Refusal | None:
    if on_committee:
        return None
    return Refusal(
        "not-on-committee",
        "a late objection comes from a review-committee member (rules §11.5): ask one to file "
        "it, or report suspected fraud, which any member may",
        Kind.FORBIDDEN,
    )


def may_complete_review(actor: Actor, facts: SubmissionFacts, *, completed: bool) -> Refusal | None:
    """The assigned reviewer says the review is done, once, while it runs (rules §4.4)."""
    if (refusal := may(actor, Action.COMPLETE_REVIEW)) is not None:
        return refusal
    if facts.state != SubmissionState.PASSED_CHECKS or not facts.review_started:
        return Refusal("not-in-review", "the submission is not in review")
    if completed:
        return Refusal("already-complete", "the review was completed already")
    return None


def may_act_on_objections(facts: SubmissionFacts) -> Refusal | None:
    if facts.state not in (SubmissionState.PASSED_CHECKS, SubmissionState.FINALIZED):
        return Refusal("closed", f"the submission is {facts.state}: its objections are closed")
    return None


# --- points ------------------------------------------------------------------------------

POINT_STATES = tuple(PointState)


def may_set_point_state(
    actor: Actor, facts: SubmissionFacts, current: str, target: str
) -> Refusal | None:
    """During review a faulty point is withdrawn (by its submitter or the chair) or held
    in dispute (the chair); after finalization the chair invalidates it, and a point held
    in dispute returns or is withdrawn (rules §11.1, §11.6, §11.7). A withdrawn or
    invalidated point stays so."""
    if target not in POINT_STATES:
        return Refusal(
            "bad-state", f"a point's state is one of {', '.join(POINT_STATES)}", Kind.INVALID
        )
    if current in TERMINAL_POINT_STATES:
        return Refusal("point-closed", f"the point is {current}: that is final")
    if current == target:
        return Refusal("unchanged", f"the point is {current} already")
    action = Action.WITHDRAW_POINT if target == "withdrawn" else Action.JUDGE_POINT
    if (refusal := may(actor, action)) is not None:
        return refusal
    if target == "invalidated":
        if facts.state != SubmissionState.FINALIZED:
            return Refusal(
                "not-allowed", "points are invalidated after finalization; withdraw it in review"
            )
        return None
    # A point held in dispute past finalization is settled after it: it returns to its
    # curve, or is withdrawn (rules §11.6).
    settling = current == "disputed" and target in ("active", "withdrawn")
    if facts.state == SubmissionState.FINALIZED and settling:
        return None
    if facts.state != SubmissionState.PASSED_CHECKS:
        return Refusal("not-allowed", f"points are {target} during review only")
    return None


@dataclass(frozen=True)
class PointFacts:
    concurrency: int
    region: str | None
    offline_kind: str  # none | elected | dedicated
    state: str = "active"


def curve_shortfall(points: Iterable[PointFacts], agentic: bool, max_points: int) -> str | None:
    """Why a curve's active points no longer make a compliant curve (rules §5.2): at least
    one point in each concurrency region and 7 points (8 with a dedicated Offline run), 32
    at most; None when they do."""
    active = [p for p in points if p.state == "active"]
    dedicated = any(p.offline_kind == "dedicated" for p in active)
    minimum = 8 if dedicated and not agentic else 7
    problems = []
    if len(active) < minimum:
        problems.append(f"{len(active)} active point(s), fewer than the minimum {minimum}")
    if len(active) > max_points:
        problems.append(f"{len(active)} active points, more than {max_points}")
    regions = Counter(p.region for p in active if p.offline_kind != "dedicated")
    empty = [REGION_NAMES[r] for r in REQUIRED_REGIONS if not regions.get(r)]
    if empty:
        problems.append("no active point in the " + ", ".join(empty) + " region(s)")
    return "; ".join(problems) or None


# --- the committee ---------------------------------------------------------------------


def committee_window_start(cohort: Cohort, months: int, cohorts: int) -> dt.date:
    """Rules §4.4: the committee for *cohort* are the organisations with a finalized result
    published on or after this date: 6 months or 12 cohorts back, whichever is longer,
    counted from the 1st day of the cohort's month."""
    month_index = cohort.year * 12 + (cohort.month - 1) - months
    by_months = dt.date(month_index // 12, month_index % 12 + 1, 1)
    walker = cohort
    for _ in range(cohorts):
        walker = walker.previous()
    return min(by_months, walker.date)
