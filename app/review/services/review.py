"""Peer review (rules §11.2–§11.4): when it starts, who reviews, finalization, the
record kept in line with it, and the embargoes. What time passing does (penalties,
retractions, deadlines, the clock's finalization) is ``ticks.advance_clocks``, which the
worker's scheduler runs every minute with the real time and tests run with any time."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import (
    chairs,
    committee,
    members_of,
    notify,
)
from app.audit import SYSTEM, change_state, policy_in_force, record
from app.core.authorization import Actor, Role
from app.core.cohorts import Cohort
from app.core.lifecycle import (
    IllegalTransition,
    ObjectionState,
    PointState,
    PublicationMode,
    RecordStatus,
    ReviewPhase,
    SubmissionState,
)
from app.core.refusals import Kind, Refused
from app.core.times import local_text
from app.db.models import (
    AuditEvent,
    AuditRound,
    CohortRelease,
    Objection,
    Organization,
    Publication,
    Submission,
    User,
    utcnow,
)
from app.publishing.services.embargo import embargo_release
from app.publishing.services.publishing import (
    PublishingError,
    record_cohort,
    sync_record,
)
from app.review.domain.objections import CLOSED, TYPES
from app.review.domain.policy import (
    LateWindow,
    PointFacts,
    committee_window_start,
    curve_shortfall,
    may_change_embargo,
    may_complete_review,
)
from app.review.services.policy import enforce, facts_of
from app.settings import Settings, business_calendar, review_clock, review_policy
from app.submissions.domain.embargo import latest_embargo
from app.submissions.services.points import find_point

Chooser = Callable[[list[User]], User]


class ReviewError(Refused):
    pass


def link_of(submission: Submission) -> str:
    return f"/submissions/{submission.public_id}"


def label_of(submission: Submission) -> str:
    """A submission as people name it in an inbox: its organisation, its systems and
    the id its bundle gives itself (never the portal's hex id)."""
    systems = sorted({c.system.system_name or c.system.dir_name for c in submission.curves})
    what = ", ".join(systems) if systems else submission.original_filename
    own_id = submission.bundle_submission_id or submission.original_filename
    return f"{submission.organization.name}: {what} ({own_id})"


def blocking_objections(session: Session, submission: Submission) -> list[Objection]:
    """Open objections that keep the submission from finalizing (cosmetic ones do not)."""
    return [
        o
        for o in session.scalars(
            select(Objection).where(Objection.submission_id == submission.id).order_by(Objection.id)
        )
        if ObjectionState(o.state) not in CLOSED and TYPES[o.type].blocks_finalization
    ]


def first_released_cohort(session: Session, submission: Submission) -> str | None:
    return session.scalar(
        select(func.min(Publication.cohort))
        .join(CohortRelease, CohortRelease.cohort == Publication.cohort)
        .where(Publication.submission_id == submission.id, Publication.in_record())
    )


# --- the start of review and the reviewer ---------------------------------------------


def on_checks_passed(
    session: Session, settings: Settings, submission: Submission, at: dt.datetime
) -> None:
    """Confidential review starts when the checks pass; provisional review waits for the
    provisional publication (rules §11.2)."""
    if not submission.for_review or submission.review_eligible_at is not None:
        return
    if submission.publication_mode == PublicationMode.PROVISIONAL:
        submission.review_phase = ReviewPhase.AWAITING
        return
    start_review(session, settings, submission, at)


def start_review(
    session: Session,
    settings: Settings,
    submission: Submission,
    at: dt.datetime,
    choose: Chooser | None = None,
) -> None:
    if submission.review_eligible_at is not None:
        return
    submission.review_eligible_at = at
    submission.review_phase = ReviewPhase.PEER_REVIEW
    closes = review_clock(settings).peer_review_closes(at)
    record(
        session,
        submission,
        action="review started",
        reason=f"review eligibility date {at.date().isoformat()}; objections until "
        f"{local_text(closes, settings.cohort_timezone)}",
        at=at,
    )
    assign_reviewer(session, settings, submission, choose=choose, at=at)
    notify(
        session,
        [*committee(session), *members_of(session, submission.organization_id)],
        f"Peer review started: {label_of(submission)}",
        f"Objections may be filed until {local_text(closes, settings.cohort_timezone)}.",
        link_of(submission),
    )


def committee_organizations(
    session: Session, settings: Settings, at: dt.datetime | None = None
) -> set[int]:
    """Rules §4.4: the organisations with a finalized result published in the window
    before the cohort being prepared (6 months or 12 cohorts), whose result was not
    withdrawn or invalidated since, and those the chair appointed."""
    at = at or utcnow()
    cohort = record_cohort(session, settings, at)
    policy = review_policy(settings)
    start = committee_window_start(
        cohort, policy.committee_window_months, policy.committee_window_cohorts
    )
    since = dt.datetime.combine(start, dt.time(0), tzinfo=ZoneInfo(settings.cohort_timezone))
    finalized = session.scalars(
        select(Submission.organization_id)
        .join(Publication, Publication.submission_id == Submission.id)
        .where(
            Submission.state == SubmissionState.FINALIZED.value,
            Publication.status == RecordStatus.VERIFIED,
            Publication.in_record(),
            Publication.published_at >= since,
        )
        .distinct()
    ).all()
    appointed = session.scalars(
        select(Organization.id).where(Organization.committee_appointed.is_(True))
    ).all()
    return {*finalized, *appointed}


def late_window(session: Session, settings: Settings) -> LateWindow:
    """The late-objection window in force: the policy's days, and the audit votes held
    and pending (it lasts until the next one after finalization, rules §11.5)."""
    rounds = session.scalars(select(AuditRound)).all()
    return LateWindow(
        days=review_policy(settings).late_objection_days,
        votes=tuple(r.tallied_at for r in rounds if r.tallied_at is not None),
        vote_pending=any(r.tallied_at is None for r in rounds),
    )


def holds_seat(organization: Organization | None, members: set[int]) -> bool:
    """*organization* sits on the committee (*members*: ``committee_organizations``) and
    has not lost its seat by missing a review deadline (rules §4.4)."""
    return (
        organization is not None
        and organization.id in members
        and organization.committee_suspended_at is None
    )


def on_committee(
    session: Session, settings: Settings, organization: Organization | None, at: dt.datetime
) -> bool:
    return holds_seat(organization, committee_organizations(session, settings, at))


def _draw(settings: Settings, submission: Submission) -> Chooser:
    """The random draw of a reviewer: unpredictable, or repeatable from the configured
    seed (rehearsals, tests, an audit that re-does the draw)."""
    if settings.reviewer_draw_seed is None:
        return random.SystemRandom().choice
    return random.Random(f"{settings.reviewer_draw_seed}:{submission.id}").choice


def reviewer_pool(
    session: Session, settings: Settings, submission: Submission, at: dt.datetime | None = None
) -> list[User]:
    """Committee members (rules §4.4) outside the submitter's organisation, whose
    organisation has not lost its seat by missing a review deadline."""
    members = committee_organizations(session, settings, at)
    return [
        u
        for u in session.scalars(
            select(User)
            .where(User.role == Role.REVIEWER.value, User.is_active.is_(True))
            .order_by(User.id)
        )
        if u.organization_id != submission.organization_id and holds_seat(u.organization, members)
    ]


def assign_reviewer(
    session: Session,
    settings: Settings,
    submission: Submission,
    *,
    reviewer: User | None = None,
    choose: Chooser | None = None,
    actor: str = SYSTEM,
    at: dt.datetime | None = None,
) -> User | None:
    """Assign *reviewer*, or one at random among those who have reviewed least (rotation
    without replacement); never a member of the submitter's organisation."""
    pool = reviewer_pool(session, settings, submission, at)
    if reviewer is not None:
        if reviewer not in pool:
            raise ReviewError(
                "not-eligible",
                f"{reviewer.email} cannot review this submission: reviewers are committee "
                "members (rules §4.4: a finalized result in the last 6 months or 12 cohorts, "
                "or appointed by the chair) outside the submitter's organisation",
            )
        chosen: User | None = reviewer
    elif pool:
        counts = dict(
            session.execute(
                select(Submission.reviewer_id, func.count(Submission.id))
                .where(Submission.reviewer_id.is_not(None))
                .group_by(Submission.reviewer_id)
            ).all()
        )
        fewest = min(counts.get(u.id, 0) for u in pool)
        candidates = [u for u in pool if counts.get(u.id, 0) == fewest]
        chosen = (choose or _draw(settings, submission))(candidates)
    else:
        chosen = None
    submission.reviewer = chosen
    record(
        session,
        submission,
        action="reviewer assigned",
        actor=actor,
        reason=chosen.email if chosen else "no eligible committee member; the chair must assign",
        at=at,
    )
    if chosen is not None:
        notify(
            session,
            [chosen],
            f"You review {label_of(submission)}",
            "You were assigned as its reviewer; the review must finish by the end of Week 3.",
            link_of(submission),
        )
    else:
        notify(
            session,
            chairs(session),
            f"No reviewer for {label_of(submission)}",
            "No committee member outside the submitter's organisation is available.",
            link_of(submission),
        )
    return chosen


@dataclass
class ClockReport:
    now: dt.datetime
    actions: list[str] = field(default_factory=list)

    def add(self, submission: Submission, what: str) -> None:
        self.actions.append(f"{submission.public_id[:8]}: {what}")


def record_changes(
    session: Session,
    settings: Settings,
    at: dt.datetime,
    report: ClockReport,
    *,
    cohort: Cohort | None = None,
    actor: str = SYSTEM,
) -> list[Publication]:
    """Bring every live submission's public record in line with its state (embargo dates
    reached, a cohort released); a provisional publication starts its review. *actor*:
    who released the cohort (the chair), credited with what it published."""
    live = session.scalars(
        select(Submission)
        .where(
            Submission.state.in_(
                [SubmissionState.PASSED_CHECKS.value, SubmissionState.FINALIZED.value]
            )
        )
        .order_by(Submission.id)
    ).all()
    written = [
        keep_record(
            session,
            settings,
            submission,
            at,
            cohort=cohort,
            report=report,
            points_changed=False,
            actor=actor,
        )  # fmt: skip
        for submission in live
    ]
    return [w for w in written if w is not None]


def keep_record(
    session: Session,
    settings: Settings,
    submission: Submission,
    at: dt.datetime,
    *,
    cohort: Cohort | None = None,
    why: str | None = None,
    report: ClockReport | None = None,
    points_changed: bool = True,
    actor: str = SYSTEM,
    noted: bool = False,
) -> Publication | None:
    """:func:`publishing.sync_record`, and the start of review a provisional publication
    brings (rules §11.2 C)."""
    written = sync_record(
        session, settings, submission, at, cohort=cohort, why=why,
        points_changed=points_changed, actor=actor, noted=noted,
    )  # fmt: skip
    if written is None:
        return None
    if report is not None:
        report.add(submission, f"public record: {written.status} in {written.cohort}")
    if (
        written.status == RecordStatus.PROVISIONAL
        and submission.for_review
        and submission.review_eligible_at is None
    ):
        start_review(session, settings, submission, at)
    return written


# --- finalization ------------------------------------------------------------------


def due_cohort(settings: Settings, submission: Submission, finalized_at: dt.datetime) -> Cohort:
    """The first cohort after finalization (by the cutoff), delayed by the penalties."""
    cohort = business_calendar(settings).first_eligible_cohort(finalized_at)
    earliest = Cohort.parse(submission.eligible_cohort or "")
    if earliest is not None and earliest > cohort:
        cohort = earliest
    for _ in range(submission.penalty_cohorts):
        cohort = cohort.next()
    return cohort


FINALIZED_UNREVIEWED = "finalized without review"  # an audit action: 32 characters at most


def review_gap(submission: Submission) -> str:
    """What is missing of the assigned review, in words."""
    if submission.reviewer is None:
        return "no reviewer is assigned"
    return f"{submission.reviewer.email} has not completed the assigned review"


def _may_finalize(
    session: Session,
    submission: Submission,
    override: str | None,
    undisputed: bool,
    max_points: int,
) -> bool:
    """Refuses what stops a finalization (rules §4.4); True where the chair's *override*
    finalizes a review that is not complete. *undisputed*: the points that open
    objections name are held in dispute and the rest finalize, where the curves still
    meet the minimum count and regions without them (rules §11.6)."""
    if not submission.for_review:
        raise PublishingError("not-for-review", "an unverified upload is never reviewed")
    if submission.state != SubmissionState.PASSED_CHECKS.value:
        return False  # the state machine refuses it, in words of its own
    if submission.review_eligible_at is None:
        raise PublishingError(
            "review-not-started",
            "peer review has not started (provisional publication or embargo pending)",
            Kind.CONFLICT,
        )
    held = disputed_points(session, submission) if undisputed else frozenset()
    open_ones = [o for o in blocking_objections(session, submission) if o.point_label not in held]
    if open_ones:
        titles = "; ".join(f"{o.title} ({o.state})" for o in open_ones)
        hint = "" if undisputed else " (finalize the undisputed points if they name points)"
        raise PublishingError(
            "objections-open",
            f"{len(open_ones)} objection(s) are still open: {titles}{hint}",
            Kind.CONFLICT,
        )
    short = curves_short(submission, max_points, held)
    if short:
        raise PublishingError("curve-incomplete", f"cannot finalize: {short}", Kind.CONFLICT)
    if submission.review_completed_at is not None:
        return False
    if override is None:
        raise PublishingError(
            "review-incomplete",
            f"the review is not complete ({review_gap(submission)}): complete it, or "
            "finalize with an override and its reason",
            Kind.CONFLICT,
        )
    if not override.strip():
        raise PublishingError(
            "reason-required", "say why the submission is finalized without a review"
        )
    return True


def _tell_overridden(
    session: Session, submission: Submission, actor: str, why: str, at: dt.datetime
) -> None:
    """A finalization without a completed review: on the timeline, and in the inbox of
    the chairs, the submitters and the reviewer."""
    gap = review_gap(submission)
    record(session, submission, action=FINALIZED_UNREVIEWED, actor=actor,
           reason=f"{why} ({gap})", at=at)  # fmt: skip
    concerned = [*chairs(session), *members_of(session, submission.organization_id)]
    if submission.reviewer is not None:
        concerned.append(submission.reviewer)
    notify(session, concerned,
           f"Finalized without a completed review: {label_of(submission)}",
           f"{actor} finalized it ({gap}): {why}",
           link_of(submission))  # fmt: skip


def finalize(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    at: dt.datetime | None = None,
    actor: str = SYSTEM,
    reason: str | None = None,
    override: str | None = None,
    undisputed: bool = False,
) -> None:
    """Peer review is over: every blocking objection is resolved or retracted, and the
    assigned review is complete (rules §4.4). *override*: the chair's reason to finalize
    without a completed review, recorded on the timeline and sent to every inbox
    concerned; without it an incomplete review refuses. *undisputed*: the chair finalizes
    the undisputed points; those open objections name stay in dispute and return to the
    curve if the dispute ends in the submitter's favour (rules §11.6)."""
    at = at or utcnow()
    overridden = _may_finalize(
        session, submission, override, undisputed, review_policy(settings).max_points
    )
    if undisputed:
        _hold_in_dispute(session, submission, at)
    try:
        change_state(
            session,
            submission,
            SubmissionState.FINALIZED,
            actor=actor,
            action="finalize",
            reason=reason,
            at=at,
            policy=policy_in_force(session, settings),
        )
    except IllegalTransition as exc:
        raise PublishingError("not-allowed", str(exc), Kind.CONFLICT) from exc
    submission.finalized_at = at
    submission.review_phase = ReviewPhase.CLOSED
    if overridden:
        assert override is not None
        _tell_overridden(session, submission, actor, override.strip(), at)
    organisation = submission.organization
    if organisation.committee_suspended_at is not None:
        organisation.committee_suspended_at = None  # a newly finalized result (rules §4.4)
        record(
            session,
            submission,
            action="committee seat restored",
            reason=f"{organisation.name} has a newly finalized result",
            at=at,
        )
    cohort = due_cohort(settings, submission, at)
    submission.due_cohort = str(cohort)
    held = embargo_release(settings, submission)
    when = f"on {held.isoformat()} (embargo)" if held else f"in cohort {cohort}"
    if keep_record(session, settings, submission, at, why="finalized") is not None:
        when = "now: the \u201cpeer review pending\u201d tag is removed"
    record(session, submission, action="publication scheduled", reason=when, at=at)
    notify(
        session,
        [*members_of(session, submission.organization_id), *committee(session)],
        f"Finalized: {label_of(submission)}",
        f"Peer review is complete; the results will be published {when}.",
        link_of(submission),
    )
    session.flush()


def first_time(session: Session, submission: Submission, action: str, key: str) -> bool:
    """True the first time: the audit log remembers what the clocks already did (an
    event *action* whose reason holds *key*)."""
    done = session.scalar(
        select(AuditEvent.id).where(
            AuditEvent.submission_id == submission.id,
            AuditEvent.action == action,
            AuditEvent.reason.contains(key),
        )
    )
    return done is None


def withdraw_by_rule(
    session: Session, settings: Settings, submission: Submission, reason: str, at: dt.datetime
) -> None:
    """The rules withdraw a silent submitter's submission (rules §11.3, §11.6): on the
    timeline, out of the record, and the committee and the organisation told."""
    change_state(session, submission, SubmissionState.WITHDRAWN, action="withdrawn by penalty",
                 reason=reason, at=at, policy=policy_in_force(session, settings))  # fmt: skip
    submission.review_phase = ReviewPhase.CLOSED
    keep_record(session, settings, submission, at, why=reason)
    notify(session, [*members_of(session, submission.organization_id), *committee(session)],
           f"Withdrawn: {label_of(submission)}", reason, link_of(submission))  # fmt: skip


def disputed_points(session: Session, submission: Submission) -> frozenset[str]:
    """The points that open objections name (a dispute over a point, rules §11.6)."""
    return frozenset(
        o.point_label for o in blocking_objections(session, submission) if o.point_label
    )


def _hold_in_dispute(session: Session, submission: Submission, at: dt.datetime) -> None:
    for label in sorted(disputed_points(session, submission)):
        point = find_point(submission, label)
        if point is not None and point.state == PointState.ACTIVE:
            point.state = PointState.DISPUTED
            point.state_reason = "held in dispute while the rest finalized (rules §11.6)"
            said = f"{label}: active → disputed: the objection on it is open"
            record(session, submission, action="point state", actor=SYSTEM, reason=said, at=at)


def curves_short(
    submission: Submission, max_points: int, held: frozenset[str] = frozenset()
) -> str | None:
    """Why the active points no longer make compliant curves (rules §5.2), if they don't:
    withdrawn, disputed and invalidated points do not count (§11.6, §11.7), nor those
    *held* (labels of points about to be held in dispute)."""
    problems = []
    for curve in submission.curves:
        prefix = f"{curve.system.dir_name}/{curve.benchmark_model}/"
        points = [
            PointFacts(p.concurrency, p.region, p.offline_kind,
                       PointState.DISPUTED if prefix + p.dir_name in held else p.state)
            for p in curve.points
        ]  # fmt: skip
        short = curve_shortfall(points, curve.is_agentic, max_points)
        if short:
            problems.append(f"{curve.system.dir_name}/{curve.benchmark_model}: {short}")
    return "; ".join(problems) or None


# --- the reviewer's word ---------------------------------------------------------------


def complete_review(
    *,
    session: Session,
    submission: Submission,
    reviewer: Principal | User,
    notes: str,
    at: dt.datetime | None = None,
) -> None:
    """The assigned reviewer says the review is done (by the end of Week 3, rules §4.4);
    *reviewer*: the signed-in caller (its scopes count), or the stored user."""
    at = at or utcnow()
    enforce(
        may_complete_review(
            actor_of(reviewer, submission),
            facts_of(session, submission),
            completed=submission.review_completed_at is not None,
        )
    )
    submission.review_completed_at = at
    record(session, submission, action="review completed", actor=reviewer.email,
           reason=notes.strip() or None, at=at)  # fmt: skip
    notify(session, [*chairs(session), *members_of(session, submission.organization_id)],
           f"Review completed: {label_of(submission)}", notes.strip() or "No notes.",
           link_of(submission))  # fmt: skip


# --- embargo changes ------------------------------------------------------------------


def change_embargo(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    embargo: dt.date | None,
    actor: str,
    who: Principal | None = None,
    at: dt.datetime | None = None,
) -> None:
    """The embargo date may change after submission; the committee is told (rules §4.2).
    *who*: the person asking (None: the chair's own tools)."""
    at = at or utcnow()
    clock = review_clock(settings)
    today = clock.local_date(at)
    asking = actor_of(who, submission) if who is not None else Actor(chair=True)
    latest = latest_embargo(
        today,
        clock.local_date(submission.finalized_at) if submission.finalized_at else None,
        resolution_days=review_policy(settings).review.resolution_days,
        max_days=review_policy(settings).review.embargo_max_days,
    )
    enforce(may_change_embargo(asking, facts_of(session, submission), embargo, today, latest))
    before = submission.embargo_date
    submission.embargo_date = embargo
    text = f"embargo {before or 'none'} → {embargo or 'none'}"
    record(session, submission, action="embargo changed", actor=actor, reason=text, at=at)
    notify(
        session,
        committee(session),
        f"Embargo changed: {label_of(submission)}",
        text,
        link_of(submission),
    )
