"""Peer review (rules §11.2–§11.4): when it starts, who reviews, its phases and clocks,
finalization, and the embargoes.

Everything that happens because time passed is done by :func:`advance_clocks`, which the
worker's scheduler runs every minute with the real time and tests run with any time:
provisional results released on their embargo date, phase changes, the non-response
penalties (1 and 2 cohort dates of delay, withdrawal at 10 business days), objections
retracted by the objector's silence, the meeting trigger, the reviewer's Week-3 deadline,
the dispute backstop, automatic finalization once the peer-review window has closed with
nothing open, finalized results released on their embargo date, abandoned temporary
uploads swept, and the e-mail of new notifications.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import (
    chairs,
    committee,
    members_of,
    notify,
    send_pending_email,
)
from app.audit import SYSTEM, change_state, record
from app.core.authorization import Actor, Role
from app.core.clocks import ReviewClock
from app.core.cohorts import Cohort
from app.core.lifecycle import (
    IllegalTransition,
    ObjectionState,
    PublicationMode,
    ResultStatus,
    ReviewPhase,
    SubmissionState,
)
from app.core.refusals import Kind, Refused
from app.core.times import local_text
from app.core.views import Timestamp
from app.db.models import (
    AuditEvent,
    CohortRelease,
    Objection,
    ObjectionMessage,
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
    PointFacts,
    committee_window_start,
    curve_shortfall,
    may_change_embargo,
    may_complete_review,
)
from app.review.services.clocks import submitter_clock
from app.review.services.policy import enforce, facts_of
from app.settings import Settings, business_calendar, review_clock
from app.submissions.domain.embargo import latest_embargo
from app.submissions.services.storage import sweep_tmp
from app.submissions.services.views import SubmissionSummary, summary_fields

Chooser = Callable[[list[User]], User]
TMP_MAX_AGE_S = 24 * 3600  # an upload still unfinished after a day was abandoned


class ReviewError(Refused):
    pass


def _link(submission: Submission) -> str:
    return f"/submissions/{submission.public_id}"


def _label(submission: Submission) -> str:
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


class ReviewSummary(BaseModel):
    """Where a submission's review stands: phase, windows, reviewer, penalties, the
    publication plan (rules §4.2, §4.4, §11.2)."""

    phase: ReviewPhase | None
    publication_mode: PublicationMode
    embargo_date: dt.date | None
    eligible_at: Timestamp | None = Field(description="when review began (its cohort)")
    peer_review_closes: Timestamp | None
    resolution_closes: Timestamp | None
    reviewer: str | None
    review_completed_at: Timestamp | None
    submitted_by: str | None
    open_objections: int = Field(description="open objections that block finalization")
    penalty_cohorts: int
    due_cohort: str | None
    published_in: str | None = Field(description="the first released cohort that showed it")
    embargo_release: dt.date | None
    review_starts_with: str | None = Field(description="awaiting review: what starts it")


def review_summary(session: Session, settings: Settings, submission: Submission) -> ReviewSummary:
    clock = review_clock(settings)
    eligible = submission.review_eligible_at
    open_ones = blocking_objections(session, submission) if eligible else []
    release = embargo_release(settings, submission)
    return ReviewSummary(
        phase=submission.review_phase,
        publication_mode=submission.publication_mode,
        embargo_date=submission.embargo_date,
        eligible_at=eligible,
        peer_review_closes=clock.peer_review_closes(eligible) if eligible else None,
        resolution_closes=clock.resolution_closes(eligible) if eligible else None,
        reviewer=submission.reviewer.email if submission.reviewer else None,
        review_completed_at=submission.review_completed_at,
        submitted_by=submission.submitted_by.email if submission.submitted_by else None,
        open_objections=len(open_ones),
        penalty_cohorts=submission.penalty_cohorts,
        due_cohort=submission.due_cohort,
        # Only a cohort the chair has released has published anything.
        published_in=first_released_cohort(session, submission),
        embargo_release=release,
        # Awaiting review: what starts it (the provisional publication, rules §11.2 C).
        review_starts_with=None
        if submission.review_phase != ReviewPhase.AWAITING.value
        else (
            f"its embargo ends on {release.isoformat()}"
            if release
            else f"cohort {submission.eligible_cohort or submission.target_cohort} is published"
        ),
    )


class QueuedSubmission(SubmissionSummary):
    """A submission in the review queue."""

    review: ReviewSummary
    assigned_to_me: bool = Field(description="the caller is its reviewer")


def review_queue(
    session: Session, settings: Settings, submissions: Sequence[Submission], user_id: int | None
) -> list[QueuedSubmission]:
    return [
        QueuedSubmission.model_validate(
            {
                **summary_fields(s),
                "review": review_summary(session, settings, s),
                "assigned_to_me": s.reviewer_id == user_id,
            }
        )
        for s in submissions
    ]


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
        f"Peer review started: {_label(submission)}",
        f"Objections may be filed until {local_text(closes, settings.cohort_timezone)}.",
        _link(submission),
    )


def committee_organizations(
    session: Session, settings: Settings, at: dt.datetime | None = None
) -> set[int]:
    """Rules §4.4: the organisations with a finalized result published in the window
    before the cohort being prepared (6 months or 12 cohorts), whose result was not
    withdrawn or invalidated since, and those the chair appointed."""
    at = at or utcnow()
    cohort = record_cohort(session, settings, at)
    start = committee_window_start(cohort)
    since = dt.datetime.combine(start, dt.time(0), tzinfo=ZoneInfo(settings.cohort_timezone))
    finalized = session.scalars(
        select(Submission.organization_id)
        .join(Publication, Publication.submission_id == Submission.id)
        .where(
            Submission.state == SubmissionState.FINALIZED.value,
            Publication.status == ResultStatus.VERIFIED.value,
            Publication.in_record(),
            Publication.published_at >= since,
        )
        .distinct()
    ).all()
    appointed = session.scalars(
        select(Organization.id).where(Organization.committee_appointed.is_(True))
    ).all()
    return {*finalized, *appointed}


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
        if u.organization_id is not None
        and u.organization_id in members
        and u.organization_id != submission.organization_id
        and u.organization is not None
        and u.organization.committee_suspended_at is None
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
            f"You review {_label(submission)}",
            "You were assigned as its reviewer; the review must finish by the end of Week 3.",
            _link(submission),
        )
    else:
        notify(
            session,
            chairs(session),
            f"No reviewer for {_label(submission)}",
            "No committee member outside the submitter's organisation is available.",
            _link(submission),
        )
    return chosen


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
) -> Publication | None:
    """:func:`publishing.sync_record`, and the start of review a provisional publication
    brings (rules §11.2 C)."""
    written = sync_record(
        session, settings, submission, at, cohort=cohort, why=why,
        points_changed=points_changed, actor=actor,
    )  # fmt: skip
    if written is None:
        return None
    if report is not None:
        report.add(submission, f"public record: {written.status} in {written.cohort}")
    if (
        written.status == ResultStatus.PROVISIONAL
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


def _review_gap(submission: Submission) -> str:
    """What is missing of the assigned review, in words."""
    if submission.reviewer is None:
        return "no reviewer is assigned"
    return f"{submission.reviewer.email} has not completed the assigned review"


def finalize(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    at: dt.datetime | None = None,
    actor: str = SYSTEM,
    reason: str | None = None,
    override: str | None = None,
) -> None:
    """Peer review is over: every blocking objection is resolved or retracted, and the
    assigned review is complete (rules §4.4). *override*: the chair's reason to finalize
    without a completed review, recorded on the timeline and sent to every inbox
    concerned; without it an incomplete review refuses."""
    at = at or utcnow()
    if not submission.for_review:
        raise PublishingError("not-for-review", "an unverified upload is never reviewed")
    overridden = False
    if submission.state == SubmissionState.PASSED_CHECKS.value:
        if submission.review_eligible_at is None:
            raise PublishingError(
                "review-not-started",
                "peer review has not started (provisional publication or embargo pending)",
                Kind.CONFLICT,
            )
        open_ones = blocking_objections(session, submission)
        if open_ones:
            titles = "; ".join(f"{o.title} ({o.state})" for o in open_ones)
            raise PublishingError(
                "objections-open",
                f"{len(open_ones)} objection(s) are still open: {titles}",
                Kind.CONFLICT,
            )
        short = curves_short(submission)
        if short:
            raise PublishingError("curve-incomplete", f"cannot finalize: {short}", Kind.CONFLICT)
        if submission.review_completed_at is None:
            if override is None:
                raise PublishingError(
                    "review-incomplete",
                    f"the review is not complete ({_review_gap(submission)}): complete it, or "
                    "finalize with an override and its reason",
                    Kind.CONFLICT,
                )
            if not override.strip():
                raise PublishingError(
                    "reason-required", "say why the submission is finalized without a review"
                )
            overridden = True
    try:
        change_state(
            session,
            submission,
            SubmissionState.FINALIZED,
            actor=actor,
            action="finalize",
            reason=reason,
            at=at,
        )
    except IllegalTransition as exc:
        raise PublishingError("not-allowed", str(exc), Kind.CONFLICT) from exc
    submission.finalized_at = at
    submission.review_phase = ReviewPhase.CLOSED
    if overridden:
        assert override is not None
        gap = _review_gap(submission)
        record(session, submission, action=FINALIZED_UNREVIEWED, actor=actor,
               reason=f"{override.strip()} ({gap})", at=at)  # fmt: skip
        concerned = [*chairs(session), *members_of(session, submission.organization_id)]
        if submission.reviewer is not None:
            concerned.append(submission.reviewer)
        notify(session, concerned, f"Finalized without a completed review: {_label(submission)}",
               f"{actor} finalized it ({gap}): {override.strip()}", _link(submission))  # fmt: skip
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
        f"Finalized: {_label(submission)}",
        f"Peer review is complete; the results will be published {when}.",
        _link(submission),
    )
    session.flush()


def curves_short(submission: Submission) -> str | None:
    """Why the active points no longer make compliant curves (rules §5.2), if they don't:
    withdrawn, disputed and invalidated points do not count (§11.6, §11.7)."""
    problems = []
    for curve in submission.curves:
        points = [
            PointFacts(p.concurrency, p.region, p.offline_kind, p.state) for p in curve.points
        ]
        short = curve_shortfall(points, curve.is_agentic)
        if short:
            problems.append(f"{curve.system.dir_name}/{curve.benchmark_model}: {short}")
    return "; ".join(problems) or None


# --- the clocks ----------------------------------------------------------------------


@dataclass
class ClockReport:
    now: dt.datetime
    actions: list[str] = field(default_factory=list)

    def add(self, submission: Submission, what: str) -> None:
        self.actions.append(f"{submission.public_id[:8]}: {what}")


def _penalise(
    session: Session,
    settings: Settings,
    submission: Submission,
    objection: Objection,
    now: dt.datetime,
    report: ClockReport,
) -> bool:
    """Apply the penalty steps an unanswered objection reached; True if it withdrew."""
    clock = submitter_clock(settings, submission)
    level, step = clock.penalty_due(objection.filed_at, now)
    if step is None or level <= objection.penalty_level:
        return False
    objection.penalty_level = level
    people = [
        *members_of(session, submission.organization_id),
        *committee(session),
    ]
    if step.withdraw:
        reason = (
            f"no answer to objection {objection.public_id[:8]} within "
            f"{step.business_days} business days (rules §11.3)"
        )
        change_state(
            session,
            submission,
            SubmissionState.WITHDRAWN,
            action="withdrawn by penalty",
            reason=reason,
            at=now,
        )
        submission.review_phase = ReviewPhase.CLOSED
        keep_record(session, settings, submission, now, why=reason)
        notify(session, people, f"Withdrawn: {_label(submission)}", reason, _link(submission))
        report.add(submission, "withdrawn by penalty")
        return True
    delay = max(submission.penalty_cohorts, step.delay_cohorts)
    reason = (
        f"objection {objection.public_id[:8]} unanswered for {step.business_days} business "
        f"days: finalization delayed by {delay} cohort date(s)"
    )
    submission.penalty_cohorts = delay
    record(session, submission, action="penalty", reason=reason, at=now)
    notify(session, people, f"Penalty: {_label(submission)}", reason, _link(submission))
    report.add(submission, f"penalty: {delay} cohort(s)")
    return False


def _objector_silence(
    session: Session, submission: Submission, objection: Objection, now: dt.datetime
) -> None:
    objection.state = ObjectionState.RETRACTED
    objection.closed_at = now
    text = "The objectors did not respond in time after the submitter's answer: retracted."
    objection.messages.append(ObjectionMessage(author=SYSTEM, action="retract", body=text, at=now))
    record(session, submission, action="objection retracted", reason=text, at=now)


def _reviewer_deadline(
    session: Session,
    clock: ReviewClock,
    submission: Submission,
    now: dt.datetime,
    report: ClockReport,
) -> None:
    """An assigned review unfinished at the end of Week 3 takes the reviewer's organisation
    off the committee until it has a newly finalized result (rules §4.4)."""
    reviewer = submission.reviewer
    assert submission.review_eligible_at is not None
    if (
        reviewer is None
        or submission.review_completed_at is not None
        or now <= clock.peer_review_closes(submission.review_eligible_at)
        or not _once(session, submission, "reviewer missed Week 3", reviewer.email)
    ):
        return
    organisation = reviewer.organization
    text = f"{reviewer.email} did not complete the assigned review by the end of Week 3"
    if organisation is not None and organisation.committee_suspended_at is None:
        organisation.committee_suspended_at = now
        text += f"; {organisation.name} leaves the committee until it has a newly finalized result"
    record(session, submission, action="reviewer missed Week 3", reason=text, at=now)
    notify(session, [*chairs(session), reviewer], f"Review deadline missed: {_label(submission)}",
           text, _link(submission))  # fmt: skip
    report.add(submission, "reviewer missed Week 3")


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
           f"Review completed: {_label(submission)}", notes.strip() or "No notes.",
           _link(submission))  # fmt: skip


def _meeting_due(
    clock: ReviewClock, submission: Submission, objection: Objection, now: dt.datetime
) -> bool:
    """An open objection 12+ business days old, or one still open as Week 5 begins."""
    assert submission.review_eligible_at is not None
    week5 = clock.day_end(submission.review_eligible_at, 28)
    old = clock.business_days_elapsed(objection.filed_at, now)
    return old >= clock.rules.meeting_business_days or now > week5


def _once(session: Session, submission: Submission, action: str, key: str) -> bool:
    """True the first time: the audit log remembers what the clocks already did."""
    done = session.scalar(
        select(AuditEvent.id).where(
            AuditEvent.submission_id == submission.id,
            AuditEvent.action == action,
            AuditEvent.reason.contains(key),
        )
    )
    return done is None


def _tick_submission(
    session: Session,
    settings: Settings,
    submission: Submission,
    now: dt.datetime,
    report: ClockReport,
) -> None:
    clock = submitter_clock(settings, submission)
    assert submission.review_eligible_at is not None
    objections = session.scalars(
        select(Objection).where(Objection.submission_id == submission.id).order_by(Objection.id)
    ).all()
    for objection in objections:
        state = ObjectionState(objection.state)
        if state in CLOSED:
            continue
        if objection.submitter_answered_at is None and _penalise(
            session, settings, submission, objection, now, report
        ):
            return
        if (
            state == ObjectionState.ANSWERED
            and objection.objector_due_at
            and now > objection.objector_due_at
        ):
            _objector_silence(session, submission, objection, now)
            report.add(submission, f"objection {objection.public_id[:8]} retracted by silence")
        elif _meeting_due(clock, submission, objection, now) and _once(
            session, submission, "meeting may be called", objection.public_id[:8]
        ):
            text = (
                f"objection {objection.public_id[:8]} is {clock.rules.meeting_business_days}+ "
                "business days old or the review entered Week 5: the chair may call a meeting "
                "(rules §11.3)"
            )
            record(session, submission, action="meeting may be called", reason=text, at=now)
            notify(session, chairs(session), f"Meeting: {_label(submission)}", text,
                   _link(submission))  # fmt: skip
            report.add(submission, "meeting may be called")
    session.flush()
    _reviewer_deadline(session, clock, submission, now, report)
    blocking = bool(blocking_objections(session, submission))
    phase = clock.phase(submission.review_eligible_at, now, blocking)
    if phase != submission.review_phase:
        previous = submission.review_phase
        submission.review_phase = phase
        record(session, submission, action="review phase", reason=f"{previous} → {phase}", at=now)
        report.add(submission, f"phase {phase}")
        if phase == ReviewPhase.DISPUTE:
            notify(
                session,
                chairs(session),
                f"Dispute: {_label(submission)}",
                "Objections are still open after Week 6; certify them and name a panel "
                "within 2 business days (rules §11.6).",
                _link(submission),
            )
    backstop = clock.resolution_closes(submission.review_eligible_at) + dt.timedelta(
        weeks=clock.rules.dispute_backstop_weeks
    )

    def tell_the_chair_once(action: str, text: str) -> None:
        """What the clock leaves to the chair: on the timeline and in the inbox, once."""
        if _once(session, submission, action, ""):
            record(session, submission, action=action, reason=text, at=now)
            notify(session, chairs(session), f"{action.capitalize()}: {_label(submission)}",
                   text, _link(submission))  # fmt: skip
            report.add(submission, action)

    if phase == ReviewPhase.DISPUTE and now > backstop:
        tell_the_chair_once(
            "dispute backstop",
            f"the dispute is {clock.rules.dispute_backstop_weeks} weeks old: the chair decides "
            "on the record (rules §11.6)",
        )
    short = curves_short(submission)
    if phase != ReviewPhase.PEER_REVIEW and not blocking and short:
        tell_the_chair_once(
            "cannot finalize", f"cannot finalize: {short}; the chair decides (withdraw or reject)"
        )
    elif (
        phase != ReviewPhase.PEER_REVIEW and not blocking and submission.review_completed_at is None
    ):
        # The clock never finalizes an unreviewed result: the chair decides.
        tell_the_chair_once(
            "review incomplete",
            f"peer review is over with no open objection, but {_review_gap(submission)}: the "
            "chair completes the assignment or finalizes with an override and its reason",
        )
    elif phase != ReviewPhase.PEER_REVIEW and not blocking:
        finalize(
            session=session,
            settings=settings,
            submission=submission,
            at=now,
            reason="peer review closed with no open objection",
        )
        report.add(submission, "finalized")


def advance_clocks(
    session: Session, settings: Settings, now: dt.datetime | None = None
) -> ClockReport:
    """Everything due by *now*; safe to run any number of times (each step is once)."""
    now = now or utcnow()
    report = ClockReport(now)
    # Embargo dates reached: provisional publications (their reviews start this tick).
    record_changes(session, settings, now, report)
    reviewing = session.scalars(
        select(Submission)
        .where(
            Submission.state == SubmissionState.PASSED_CHECKS.value,
            Submission.for_review.is_(True),
            Submission.review_eligible_at.is_not(None),
        )
        .order_by(Submission.id)
    ).all()
    for submission in reviewing:
        _tick_submission(session, settings, submission, now, report)
    record_changes(session, settings, now, report)  # after the ticks: what they finalized
    session.flush()
    swept = sweep_tmp(settings.tmp_dir, older_than_s=TMP_MAX_AGE_S)
    if swept:
        report.actions.append(f"removed {swept} abandoned temporary file(s)")
    report.actions.extend(f"e-mailed {n}" for n in [send_pending_email(session, settings)] if n)
    return report


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
        resolution_days=settings.resolution_days,
        max_days=settings.embargo_max_days,
    )
    enforce(may_change_embargo(asking, facts_of(session, submission), embargo, today, latest))
    before = submission.embargo_date
    submission.embargo_date = embargo
    text = f"embargo {before or 'none'} → {embargo or 'none'}"
    record(session, submission, action="embargo changed", actor=actor, reason=text, at=at)
    notify(
        session,
        committee(session),
        f"Embargo changed: {_label(submission)}",
        text,
        _link(submission),
    )
