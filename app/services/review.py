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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import (
    AuditEvent,
    Objection,
    ObjectionMessage,
    Publication,
    Submission,
    User,
    utcnow,
)
from app.domain.accounts import Role
from app.domain.cohorts import Cohort
from app.domain.lifecycle import IllegalTransition, PublicationMode, ResultStatus, SubmissionState
from app.domain.objections import CLOSED, TYPES, ObjectionState
from app.domain.review import ReviewClock, ReviewPhase
from app.settings import Settings

from .audit import SYSTEM, change_state, record
from .clocks import business_calendar, embargo_release, review_clock
from .errors import ServiceError
from .notifications import chairs, committee, members_of, notify, send_pending_email
from .publishing import (
    PublishingError,
    publication_status,
    publish_due,
    publish_submission,
    take_off_public_view,
)
from .storage import sweep_tmp

Chooser = Callable[[list[User]], User]
TMP_MAX_AGE_S = 24 * 3600  # an upload still unfinished after a day was abandoned
# States in which a submission's embargo date may still change (rules §4.2).
EMBARGO_CHANGEABLE = frozenset(
    s.value
    for s in (
        SubmissionState.RECEIVED,
        SubmissionState.CHECKING,
        SubmissionState.PASSED_CHECKS,
        SubmissionState.FINALIZED,
    )
)


class ReviewError(ServiceError):
    pass


def _link(submission: Submission) -> str:
    return f"/submissions/{submission.public_id}"


def _label(submission: Submission) -> str:
    return f"{submission.organization.name} submission {submission.public_id[:8]}"


def under_review(submission: Submission) -> bool:
    return (
        submission.for_review
        and submission.state == SubmissionState.PASSED_CHECKS.value
        and submission.review_eligible_at is not None
    )


def blocking_objections(session: Session, submission: Submission) -> list[Objection]:
    """Open objections that keep the submission from finalizing (cosmetic ones do not)."""
    return [
        o
        for o in session.scalars(
            select(Objection).where(Objection.submission_id == submission.id).order_by(Objection.id)
        )
        if ObjectionState(o.state) not in CLOSED and TYPES[o.type].blocks_finalization
    ]


def review_summary(session: Session, settings: Settings, submission: Submission) -> dict[str, Any]:
    """Where the review stands: phase, windows, reviewer, penalties, publication plan."""
    clock = review_clock(settings)
    eligible = submission.review_eligible_at
    open_ones = blocking_objections(session, submission) if eligible else []
    release = embargo_release(settings, submission)
    return {
        "phase": submission.review_phase,
        "publication_mode": submission.publication_mode,
        "embargo_date": submission.embargo_date.isoformat() if submission.embargo_date else None,
        "eligible_at": eligible.isoformat() if eligible else None,
        "peer_review_closes": clock.peer_review_closes(eligible).isoformat() if eligible else None,
        "resolution_closes": clock.resolution_closes(eligible).isoformat() if eligible else None,
        "reviewer": submission.reviewer.email if submission.reviewer else None,
        "review_completed_at": submission.review_completed_at.isoformat()
        if submission.review_completed_at
        else None,
        "submitted_by": submission.submitted_by.email if submission.submitted_by else None,
        "open_objections": len(open_ones),
        "penalty_cohorts": submission.penalty_cohorts,
        "due_cohort": submission.due_cohort,
        "embargo_release": release.isoformat() if release else None,
    }


# --- the start of review and the reviewer ---------------------------------------------


def on_checks_passed(
    session: Session, settings: Settings, submission: Submission, at: dt.datetime
) -> None:
    """Confidential review starts when the checks pass; provisional review waits for the
    provisional publication (rules §11.2)."""
    if not submission.for_review or submission.review_eligible_at is not None:
        return
    if submission.publication_mode == PublicationMode.PROVISIONAL:
        submission.review_phase = ReviewPhase.AWAITING.value
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
    submission.review_phase = ReviewPhase.PEER_REVIEW.value
    closes = review_clock(settings).peer_review_closes(at)
    record(
        session,
        submission,
        action="review started",
        reason=f"review eligibility date {at.date().isoformat()}; objections until "
        f"{closes.isoformat(timespec='minutes')}",
        at=at,
    )
    assign_reviewer(session, submission, choose=choose, at=at)
    notify(
        session,
        [*committee(session), *members_of(session, submission.organization_id)],
        f"Peer review started: {_label(submission)}",
        f"Objections may be filed until {closes.isoformat(timespec='minutes')}.",
        _link(submission),
    )


def reviewer_pool(session: Session, submission: Submission) -> list[User]:
    """Committee members outside the submitter's organisation, whose organisation has
    not lost its seat by missing a review deadline (rules §4.4)."""
    return [
        u
        for u in session.scalars(
            select(User)
            .where(User.role == Role.REVIEWER.value, User.is_active.is_(True))
            .order_by(User.id)
        )
        if u.organization_id is not None
        and u.organization_id != submission.organization_id
        and u.organization is not None
        and u.organization.committee_suspended_at is None
    ]


def assign_reviewer(
    session: Session,
    submission: Submission,
    *,
    reviewer: User | None = None,
    choose: Chooser | None = None,
    actor: str = SYSTEM,
    at: dt.datetime | None = None,
) -> User | None:
    """Assign *reviewer*, or one at random among those who have reviewed least (rotation
    without replacement); never a member of the submitter's organisation."""
    pool = reviewer_pool(session, submission)
    if reviewer is not None:
        if reviewer not in pool:
            raise ReviewError(
                "not-eligible",
                f"{reviewer.email} cannot review this submission: reviewers are committee "
                "members outside the submitter's organisation",
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
        chosen = (choose or random.SystemRandom().choice)(candidates)
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


def publish_cohort(
    *, session: Session, settings: Settings, cohort_id: str, at: dt.datetime | None = None
) -> list[Publication]:
    """Publish every submission due in *cohort_id* (idempotent). A provisional
    publication is its review eligibility date (rules §4.1, §11.2 C): its review starts."""
    at = at or utcnow()
    # Embargoes whose date has come are released first, should the clocks be behind.
    _release_embargoes(session, settings, at, ClockReport(at))
    created = publish_due(session=session, settings=settings, cohort_id=cohort_id, at=at)
    for publication in created:
        if publication.status == ResultStatus.PROVISIONAL:
            start_review(session, settings, publication.submission, at)
    session.flush()
    return created


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


def finalize(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    at: dt.datetime | None = None,
    actor: str = SYSTEM,
    reason: str | None = None,
) -> None:
    """Peer review is over: every blocking objection is resolved or retracted."""
    at = at or utcnow()
    if not submission.for_review:
        raise PublishingError("not-for-review", "an unverified upload is never reviewed")
    if submission.state == SubmissionState.PASSED_CHECKS.value:
        if submission.review_eligible_at is None:
            raise PublishingError(
                "review-not-started",
                "peer review has not started (provisional publication or embargo pending)",
                409,
            )
        open_ones = blocking_objections(session, submission)
        if open_ones:
            titles = "; ".join(f"{o.title} ({o.state})" for o in open_ones)
            raise PublishingError(
                "objections-open",
                f"{len(open_ones)} objection(s) are still open: {titles}",
                409,
            )
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
        raise PublishingError("not-allowed", str(exc), 409) from exc
    submission.finalized_at = at
    submission.review_phase = ReviewPhase.CLOSED.value
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
    record(session, submission, action="publication scheduled", reason=when, at=at)
    notify(
        session,
        [*members_of(session, submission.organization_id), *committee(session)],
        f"Finalized: {_label(submission)}",
        f"Peer review is complete; the results will be published {when}.",
        _link(submission),
    )
    session.flush()


# --- the clocks ----------------------------------------------------------------------


@dataclass
class ClockReport:
    now: dt.datetime
    actions: list[str] = field(default_factory=list)

    def add(self, submission: Submission, what: str) -> None:
        self.actions.append(f"{submission.public_id[:8]}: {what}")


def _release_provisional(
    session: Session, settings: Settings, submission: Submission, now: dt.datetime
) -> bool:
    """Provisional publication held by an embargo: public and reviewed from its date, but
    never before the first cohort it is eligible for."""
    clock = review_clock(settings)
    if submission.embargo_date is None or submission.review_eligible_at is not None:
        return False
    release = submission.embargo_date
    eligible = Cohort.parse(submission.eligible_cohort or "")
    if eligible is not None and eligible.date > release:
        release = eligible.date
    if clock.local_date(now) < release:
        return False
    if not _publish_released(session, settings, submission, release, now, "embargo lifted"):
        return False
    start_review(session, settings, submission, now)
    return True


def _publish_released(
    session: Session,
    settings: Settings,
    submission: Submission,
    release: dt.date,
    now: dt.datetime,
    why: str,
) -> bool:
    """Publish on the embargo date, listed in the latest cohort by that date (§4.2)."""
    status = publication_status(submission)
    if status is None:
        return False
    cohort = str(Cohort.on_or_before(release))
    publish_submission(session, settings, submission, cohort, status, now, why)
    return True


def _penalise(
    session: Session,
    settings: Settings,
    submission: Submission,
    objection: Objection,
    now: dt.datetime,
    report: ClockReport,
) -> bool:
    """Apply the penalty steps an unanswered objection reached; True if it withdrew."""
    clock = review_clock(settings)
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
        submission.review_phase = ReviewPhase.CLOSED.value
        take_off_public_view(session, submission, now)
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
    objection.state = ObjectionState.RETRACTED.value
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
    reviewer: User,
    notes: str,
    at: dt.datetime | None = None,
) -> None:
    """The assigned reviewer says the review is done (by the end of Week 3, rules §4.4)."""
    at = at or utcnow()
    if submission.reviewer_id != reviewer.id:
        raise ReviewError("not-your-review", "only the assigned reviewer completes the review", 403)
    if not under_review(submission):
        raise ReviewError("not-in-review", "the submission is not in review", 409)
    if submission.review_completed_at is not None:
        raise ReviewError("already-complete", "the review was completed already", 409)
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
    clock = review_clock(settings)
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
    if (
        phase == ReviewPhase.DISPUTE
        and now > backstop
        and _once(session, submission, "dispute backstop", "")
    ):
        text = (
            f"the dispute is {clock.rules.dispute_backstop_weeks} weeks old: the chair decides "
            "on the record (rules §11.6)"
        )
        record(session, submission, action="dispute backstop", reason=text, at=now)
        notify(session, chairs(session), f"Dispute backstop: {_label(submission)}", text,
               _link(submission))  # fmt: skip
        report.add(submission, "dispute backstop")
    if phase != ReviewPhase.PEER_REVIEW and not blocking:
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
    _release_provisionals(session, settings, now, report)  # their reviews start this tick
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
    _release_finalized(session, settings, now, report)  # after the ticks: what they finalized
    session.flush()
    swept = sweep_tmp(settings.tmp_dir, older_than_s=TMP_MAX_AGE_S)
    if swept:
        report.actions.append(f"removed {swept} abandoned temporary file(s)")
    report.actions.extend(f"e-mailed {n}" for n in [send_pending_email(session, settings)] if n)
    return report


def _release_embargoes(
    session: Session, settings: Settings, now: dt.datetime, report: ClockReport
) -> None:
    """Provisional results whose embargo date has come, and finalized ones held for it."""
    _release_provisionals(session, settings, now, report)
    _release_finalized(session, settings, now, report)


def _release_provisionals(
    session: Session, settings: Settings, now: dt.datetime, report: ClockReport
) -> None:
    waiting = session.scalars(
        select(Submission)
        .where(
            Submission.state == SubmissionState.PASSED_CHECKS.value,
            Submission.for_review.is_(True),
            Submission.publication_mode == PublicationMode.PROVISIONAL.value,
            Submission.review_eligible_at.is_(None),
            Submission.embargo_date.is_not(None),
        )
        .order_by(Submission.id)
    ).all()
    for submission in waiting:
        if _release_provisional(session, settings, submission, now):
            report.add(submission, "embargo lifted: provisional publication, review started")


def _release_finalized(
    session: Session, settings: Settings, now: dt.datetime, report: ClockReport
) -> None:
    held = session.scalars(
        select(Submission)
        .where(
            Submission.state == SubmissionState.FINALIZED.value,
            Submission.publication_mode == PublicationMode.CONFIDENTIAL.value,
            Submission.embargo_date.is_not(None),
        )
        .order_by(Submission.id)
    ).all()
    clock = review_clock(settings)
    for submission in held:
        release = embargo_release(settings, submission)
        if release is None or clock.local_date(now) < release:
            continue
        published = session.scalar(
            select(Publication.id).where(
                Publication.submission_id == submission.id, Publication.status == "verified"
            )
        )
        if published is None and _publish_released(
            session, settings, submission, release, now, "embargo date"
        ):
            report.add(submission, "embargo date: published")


# --- embargo changes ------------------------------------------------------------------


def change_embargo(
    *,
    session: Session,
    settings: Settings,
    submission: Submission,
    embargo: dt.date | None,
    actor: str,
    at: dt.datetime | None = None,
) -> None:
    """The embargo date may change after submission; the committee is told (rules §4.2)."""
    at = at or utcnow()
    if submission.state not in EMBARGO_CHANGEABLE:
        raise ReviewError(
            "not-allowed", f"a {submission.state} submission has no embargo to change", 409
        )
    if (
        submission.state == SubmissionState.FINALIZED.value
        and submission.publication_mode == PublicationMode.PROVISIONAL
    ):
        raise ReviewError("not-allowed", "a finalized provisional result is already public", 409)
    if (
        submission.review_eligible_at is not None
        and submission.publication_mode == PublicationMode.PROVISIONAL
    ):
        raise ReviewError(
            "not-allowed", "the provisional publication is out: its embargo has lifted", 409
        )
    if embargo is not None and embargo <= review_clock(settings).local_date(at):
        raise ReviewError("bad-embargo", f"the embargo date {embargo} is not in the future", 422)
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
