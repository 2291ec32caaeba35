"""What time passing does to the reviews (rules §11.3–§11.6): penalties for a silent
submitter, objections retracted by silent objectors, the reviewer's deadline, the
committee's meetings, a closed review finalized, and the record brought in line.
:func:`advance_clocks` runs it all; safe to run any number of times."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts.services.notifications import (
    chairs,
    committee,
    members_of,
    notify,
    send_pending_email,
)
from app.audit import SYSTEM, record
from app.core.clocks import ReviewClock
from app.core.lifecycle import (
    ObjectionState,
    ReviewPhase,
    SubmissionState,
)
from app.db.models import (
    Objection,
    ObjectionMessage,
    Submission,
    utcnow,
)
from app.review.domain.objections import CLOSED
from app.review.services.audits import tick_audits
from app.review.services.clocks import submitter_clock
from app.review.services.disputes import open_dispute, tick_dispute, tick_late_disputes
from app.review.services.objections import settle_point
from app.review.services.previews import tick_previews
from app.review.services.review import (
    ClockReport,
    blocking_objections,
    curves_short,
    finalize,
    first_time,
    label_of,
    link_of,
    record_changes,
    review_gap,
    withdraw_by_rule,
)
from app.settings import Settings, review_policy
from app.submissions.services.storage import sweep_tmp

TMP_MAX_AGE_S = 24 * 3600  # an upload still unfinished after a day was abandoned


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
        withdraw_by_rule(session, settings, submission, reason, now)
        report.add(submission, "withdrawn by penalty")
        return True
    delay = max(submission.penalty_cohorts, step.delay_cohorts)
    reason = (
        f"objection {objection.public_id[:8]} unanswered for {step.business_days} business "
        f"days: finalization delayed by {delay} cohort date(s)"
    )
    submission.penalty_cohorts = delay
    record(session, submission, action="penalty", reason=reason, at=now)
    notify(
        session,
        people,
        f"Penalty: {label_of(submission)}",
        reason,
        link_of(submission),
    )
    report.add(submission, f"penalty: {delay} cohort(s)")
    return False


def _objector_silence(
    session: Session,
    settings: Settings,
    submission: Submission,
    objection: Objection,
    now: dt.datetime,
) -> None:
    objection.state = ObjectionState.RETRACTED
    objection.closed_at = now
    text = "The objectors did not respond in time after the submitter's answer: retracted."
    objection.messages.append(ObjectionMessage(author=SYSTEM, action="retract", body=text, at=now))
    record(session, submission, action="objection retracted", reason=text, at=now)
    settle_point(session, settings, objection, now, upheld=False)


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
        or not first_time(session, submission, "reviewer missed Week 3", reviewer.email)
    ):
        return
    organisation = reviewer.organization
    text = f"{reviewer.email} did not complete the assigned review by the end of Week 3"
    if organisation is not None and organisation.committee_suspended_at is None:
        organisation.committee_suspended_at = now
        text += f"; {organisation.name} leaves the committee until it has a newly finalized result"
    record(session, submission, action="reviewer missed Week 3", reason=text, at=now)
    notify(session, [*chairs(session), reviewer], f"Review deadline missed: {label_of(submission)}",
           text, link_of(submission))  # fmt: skip
    report.add(submission, "reviewer missed Week 3")


def _meeting_due(
    clock: ReviewClock, submission: Submission, objection: Objection, now: dt.datetime
) -> bool:
    """An open objection 12+ business days old, or one still open as Week 5 begins."""
    assert submission.review_eligible_at is not None
    week5 = clock.day_end(submission.review_eligible_at, 28)
    old = clock.business_days_elapsed(objection.filed_at, now)
    return old >= clock.rules.meeting_business_days or now > week5


def _enter_phase(
    session: Session,
    clock: ReviewClock,
    submission: Submission,
    now: dt.datetime,
    report: ClockReport,
) -> ReviewPhase:
    """The review's phase at *now*, moved to (on the timeline) if it changed; a dispute
    begins with its record and the chair's notice."""
    assert submission.review_eligible_at is not None
    blocking = bool(blocking_objections(session, submission))
    phase = clock.phase(submission.review_eligible_at, now, blocking)
    if phase != submission.review_phase:
        previous = submission.review_phase
        submission.review_phase = phase
        record(session, submission, action="review phase", reason=f"{previous} → {phase}", at=now)
        report.add(submission, f"phase {phase}")
        if phase == ReviewPhase.DISPUTE:
            open_dispute(session, submission, now)
            notify(
                session,
                chairs(session),
                f"Dispute: {label_of(submission)}",
                "Objections are still open after Week 6; certify them and name a panel "
                "within 2 business days (rules §11.6).",
                link_of(submission),
            )
    return phase


def _tick_submission(
    session: Session,
    settings: Settings,
    submission: Submission,
    now: dt.datetime,
    report: ClockReport,
) -> None:
    clock = submitter_clock(settings, submission)
    assert submission.review_eligible_at is not None
    if _tick_objections(session, settings, clock, submission, now, report):
        return
    session.flush()
    _reviewer_deadline(session, clock, submission, now, report)
    phase = _enter_phase(session, clock, submission, now, report)
    if phase == ReviewPhase.DISPUTE:
        for done in tick_dispute(session, settings, submission, now):
            report.add(submission, done)
        if submission.state != SubmissionState.PASSED_CHECKS:
            return  # withdrawn: the silent submitter's statement never came
        phase = _enter_phase(session, clock, submission, now, report)  # objections lapsed
    blocking = bool(blocking_objections(session, submission))
    backstop = clock.resolution_closes(submission.review_eligible_at) + dt.timedelta(
        weeks=clock.rules.dispute_backstop_weeks
    )

    def tell_the_chair_once(action: str, text: str) -> None:
        """What the clock leaves to the chair: on the timeline and in the inbox, once."""
        if first_time(session, submission, action, ""):
            record(session, submission, action=action, reason=text, at=now)
            notify(session, chairs(session), f"{action.capitalize()}: {label_of(submission)}",
                   text, link_of(submission))  # fmt: skip
            report.add(submission, action)

    if phase == ReviewPhase.DISPUTE and now > backstop:
        tell_the_chair_once(
            "dispute backstop",
            f"the dispute is {clock.rules.dispute_backstop_weeks} weeks old: the chair decides "
            "on the record (rules §11.6)",
        )
    if phase == ReviewPhase.PEER_REVIEW or blocking:
        return
    short = curves_short(submission, review_policy(settings).max_points)
    if short:
        tell_the_chair_once(
            "cannot finalize", f"cannot finalize: {short}; the chair decides (withdraw or reject)"
        )
    elif submission.review_completed_at is None:
        # The clock never finalizes an unreviewed result: the chair decides.
        tell_the_chair_once(
            "review incomplete",
            f"peer review is over with no open objection, but {review_gap(submission)}: the "
            "chair completes the assignment or finalizes with an override and its reason",
        )
    else:
        finalize(
            session=session,
            settings=settings,
            submission=submission,
            at=now,
            reason="peer review closed with no open objection",
        )
        report.add(submission, "finalized")


def _tick_objections(
    session: Session,
    settings: Settings,
    clock: ReviewClock,
    submission: Submission,
    now: dt.datetime,
    report: ClockReport,
) -> bool:
    """Each open objection's clocks: the submitter's answer (a penalty when late), the
    objector's reply (retracted by silence), the meeting the chair may call. True when a
    penalty ended the review."""
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
            return True
        if (
            state == ObjectionState.ANSWERED
            and objection.objector_due_at
            and now > objection.objector_due_at
        ):
            _objector_silence(session, settings, submission, objection, now)
            report.add(submission, f"objection {objection.public_id[:8]} retracted by silence")
        elif _meeting_due(clock, submission, objection, now) and first_time(
            session, submission, "meeting may be called", objection.public_id[:8]
        ):
            text = (
                f"objection {objection.public_id[:8]} is {clock.rules.meeting_business_days}+ "
                "business days old or the review entered Week 5: the chair may call a meeting "
                "(rules §11.3)"
            )
            record(session, submission, action="meeting may be called", reason=text, at=now)
            notify(session, chairs(session), f"Meeting: {label_of(submission)}", text,
                   link_of(submission))  # fmt: skip
            report.add(submission, "meeting may be called")
    return False


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
    # Preview windows (rules §11.10): the notices before expiry, and a removal at it.
    tick_previews(session, settings, now, report)
    report.actions.extend(tick_audits(session, settings, now))  # their missed deadlines
    report.actions.extend(tick_late_disputes(session, settings, now))  # rules §11.5
    record_changes(session, settings, now, report)  # after the ticks: what they finalized
    session.flush()
    swept = sweep_tmp(settings.tmp_dir, older_than_s=TMP_MAX_AGE_S)
    if swept:
        report.actions.append(f"removed {swept} abandoned temporary file(s)")
    report.actions.extend(f"e-mailed {n}" for n in [send_pending_email(session, settings)] if n)
    return report
