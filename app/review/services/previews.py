"""The Preview rule's acts (rules §11.10): the one extension its submitter asks for and the
chair decides, the notices before expiry, and the removal of a Preview that expired
without its Available result or an extension, at the next cohort. The facts come from
``app.publishing.services.previews``; the dates from the standing module."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.services.authorization import authorize
from app.accounts.services.notifications import chairs, members_of, notify
from app.audit import SYSTEM, record
from app.core import text_limits
from app.core.authorization import Action
from app.core.lifecycle import SubmissionState, transition
from app.core.refusals import Kind, Refused
from app.db.models import PreviewExtension, Submission
from app.publishing.domain.standing import extension_problem
from app.publishing.services.previews import PreviewFacts, preview_facts, public_previews
from app.review.services.review import ClockReport, keep_record, label_of, link_of
from app.settings import Settings, review_clock


class PreviewRefused(Refused):
    pass


class ExtensionView(BaseModel):
    asked_at: dt.datetime
    new_date: dt.date = Field(description="the date the result is to be Available by")
    reason: str
    decided_at: dt.datetime | None
    granted: bool | None = Field(description="null while the chair has not decided")
    note: str | None = Field(description="the chair's words")


class PreviewView(BaseModel):
    """A Preview result's clock, as its page and the API show it (rules §11.10)."""

    available_by: dt.date | None = Field(description="declared, or moved by the extension")
    first_cohort: str | None = Field(description="the cohort its clock starts from")
    window_end: dt.date | None = Field(description="180 days after that cohort's date")
    expires: dt.date | None = Field(description="the window's end, or the extension's date")
    days_left: int | None
    extension_deadline: dt.date | None = Field(description="the last day to ask")
    removal_cohort: str | None = Field(description="where it goes if it expires")
    extension: ExtensionView | None
    successor: str | None = Field(description="the Available submission that ships it")
    removed: bool


def preview_view(facts: PreviewFacts, today: dt.date) -> PreviewView:
    clock = facts.clock
    extension = facts.extension
    return PreviewView(
        available_by=facts.available_by,
        first_cohort=str(facts.first_cohort) if facts.first_cohort else None,
        window_end=clock.window_end if clock else None,
        expires=clock.expires if clock else None,
        days_left=clock.days_left(today) if clock else None,
        extension_deadline=clock.extension_deadline if clock else None,
        removal_cohort=str(clock.removal_cohort()) if clock else None,
        extension=ExtensionView(
            asked_at=extension.asked_at,
            new_date=extension.new_date,
            reason=extension.reason,
            decided_at=extension.decided_at,
            granted=extension.granted,
            note=extension.note,
        )
        if extension
        else None,
        successor=facts.successor.public_id if facts.successor else None,
        removed=facts.removed,
    )


def _facts(session: Session, settings: Settings, submission: Submission) -> PreviewFacts:
    facts = preview_facts(session, settings, submission)
    if facts is None:
        raise PreviewRefused(
            "not-a-preview", "this submission has no Preview system (rules §11.10)", Kind.CONFLICT
        )
    return facts


def ask_extension(
    *,
    session: Session,
    settings: Settings,
    who: Principal,
    submission: Submission,
    new_date: dt.date,
    reason: str,
    now: dt.datetime,
) -> PreviewExtension:
    """The submitter asks for the one extension of the Preview window (rules §11.10: up
    to 60 days, at least 30 days before expiry); the chair decides."""
    authorize(who, submission, Action.ASK_PREVIEW_EXTENSION)
    facts = _facts(session, settings, submission)
    if facts.clock is None:
        raise PreviewRefused(
            "not-public-yet",
            "the Preview window starts with the cohort the result first appears in; there "
            "is nothing to extend before",
            Kind.CONFLICT,
        )
    reason = reason.strip()
    if not reason or len(reason) > text_limits.REASON:
        raise PreviewRefused(
            "bad-reason",
            f"say why the extension is needed, in at most {text_limits.REASON} characters",
            field="reason",
        )
    today = review_clock(settings).local_date(now)
    problem = extension_problem(
        facts.clock, today, new_date, asked_before=facts.extension is not None
    )
    if problem is not None:
        raise PreviewRefused("preview-extension", problem, Kind.CONFLICT, field="new_date")
    extension = PreviewExtension(
        submission_id=submission.id, asked_at=now, asked_by_id=who.user_id,
        new_date=new_date, reason=reason,
    )  # fmt: skip
    session.add(extension)
    text = (
        f"Preview extension asked: Available by {new_date} (window ends {facts.clock.window_end})"
    )
    record(session, submission, action="preview extension asked", actor=who.email,
           reason=f"{text}: {reason}", at=now)  # fmt: skip
    notify(session, chairs(session), f"Preview extension: {label_of(submission)}", text,
           link_of(submission))  # fmt: skip
    session.flush()
    return extension


def decide_extension(
    *,
    session: Session,
    settings: Settings,
    who: Principal,
    submission: Submission,
    grant: bool,
    note: str | None,
    now: dt.datetime,
) -> PreviewExtension:
    """The chair grants or refuses the extension asked for; a grant moves the result's
    "Available by" date on the record from the next version on."""
    authorize(who, submission, Action.DECIDE_PREVIEW_EXTENSION)
    facts = _facts(session, settings, submission)
    extension = facts.extension
    if extension is None:
        raise PreviewRefused("no-extension-asked", "no extension was asked for", Kind.CONFLICT)
    if extension.granted is not None:
        raise PreviewRefused(
            "extension-decided", "the extension was decided already", Kind.CONFLICT
        )
    note = (note or "").strip() or None
    if note is not None and len(note) > text_limits.REASON:
        raise PreviewRefused("bad-note", f"at most {text_limits.REASON} characters", field="note")
    extension.granted, extension.decided_at = grant, now
    extension.decided_by_id, extension.note = who.user_id, note
    verdict = "granted" if grant else "refused"
    text = f"Preview extension to {extension.new_date} {verdict}" + (f": {note}" if note else "")
    record(session, submission, action=f"preview extension {verdict}", actor=who.email,
           reason=text, at=now)  # fmt: skip
    notify(session, members_of(session, submission.organization_id),
           f"Preview extension {verdict}: {label_of(submission)}", text,
           link_of(submission))  # fmt: skip
    session.flush()
    if grant:
        keep_record(
            session, settings, submission, now, why=f"Preview extended to {extension.new_date}"
        )
    return extension


def tick_previews(
    session: Session, settings: Settings, now: dt.datetime, report: ClockReport
) -> None:
    """The notices before a Preview's expiry, and the removal of one that expired with
    no Available result to ship it (at the cohort after its expiry: the change joins the
    cohort being prepared, never one released)."""
    today = review_clock(settings).local_date(now)
    for submission in public_previews(session):
        facts = preview_facts(session, settings, submission)
        if facts is None or facts.clock is None or facts.removed or facts.shipped:
            continue
        if facts.expired_by(today):
            _remove(session, settings, facts, now, report)
            continue
        sent = dict(submission.preview_notices or {})
        for days in facts.clock.notices_due(today):
            if str(days) in sent:
                continue
            text = (
                f"its Preview window ends on {facts.clock.expires} ({days} days or fewer): "
                "submit its Available result, or ask for the one extension by "
                f"{facts.clock.extension_deadline} (rules §11.10); otherwise it is removed "
                f"at {facts.clock.removal_cohort()}"
            )
            notify(session, members_of(session, submission.organization_id),
                   f"Preview ends in {days} days: {label_of(submission)}", text,
                   link_of(submission))  # fmt: skip
            record(session, submission, action="preview notice", reason=text, at=now)
            sent[str(days)] = now.isoformat()
            report.add(submission, f"Preview notice ({days} days)")
        submission.preview_notices = sent


def _remove(
    session: Session, settings: Settings, facts: PreviewFacts, now: dt.datetime, report: ClockReport
) -> None:
    submission = facts.submission
    assert facts.clock is not None
    submission.preview_expired_at = now
    why = (
        f"Preview expired on {facts.clock.expires} without an Available result or an "
        "extension: removed, not archived (rules §11.10)"
    )
    before = submission.state
    if SubmissionState(submission.state) == SubmissionState.FINALIZED:
        submission.state = transition(SubmissionState.FINALIZED, SubmissionState.INVALIDATED)
    record(session, submission, action="preview expired", actor=SYSTEM, from_state=before,
           to_state=submission.state, reason=why, at=now)  # fmt: skip
    notify(session, [*members_of(session, submission.organization_id), *chairs(session)],
           f"Preview removed: {label_of(submission)}", why, link_of(submission))  # fmt: skip
    session.flush()
    keep_record(session, settings, submission, now, why=why)
    report.add(submission, "Preview expired: removed from the record")
