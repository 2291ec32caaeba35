"""The review in the browser: the committee's queue, the inbox, and the forms of the
submission page (objections and their threads, the chair's decisions, the embargo, the
reviewer, point states, a dispute's steps, a CoN endpoint's checks) and its bundle
viewer. Each form goes through the same services as the API; a refusal is shown on the
submission page (``app.review.web.forms``). The fraud reports' forms, the corrections'
and the audits page have modules of their own (``fraud_pages``, ``correction_pages``,
``audit_pages``)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal, get_user, user_by_email
from app.accounts.services.authorization import actor_of
from app.accounts.services.notifications import inbox_view, mark_read, neutral_members
from app.accounts.web.security import page_router, principal_of, signed_in_as, verify_csrf
from app.audit import timeline_view
from app.core import text_limits as text
from app.core.authorization import Action, Scope
from app.core.divisions import Availability, Division
from app.core.lifecycle import FraudOutcome, Screening, SubmissionState
from app.core.refusals import Refused
from app.db.models import Submission, User
from app.publishing.domain.standing import Remedy
from app.review.domain.fraud import may_report_fraud
from app.review.domain.objections import ACTIONS, TYPES
from app.review.domain.policy import (
    POINT_STATES,
    SubmissionFacts,
    may_change_embargo,
    may_complete_review,
    may_object,
    may_reclassify,
    may_set_point_state,
    may_withdraw,
)
from app.review.services.corrections import (
    correction_refusal,
    correction_view,
    corrections_of,
)
from app.review.services.decisions import decide, in_review, set_point_state, withdraw
from app.review.services.disputes import (
    StepFields,
    dispute_of,
    dispute_view,
    offered_steps,
    take_step,
)
from app.review.services.fraud import (
    report_view,
    reports_on,
)
from app.review.services.objections import (
    act,
    file_objection,
    get_objection,
    objection_view,
    objections_of,
    offered_actions,
)
from app.review.services.policy import facts_of
from app.review.services.previews import ask_extension, decide_extension
from app.review.services.reachability import endpoint_views, record_reachability
from app.review.services.releases import CohortPlan, release_plan, upcoming_cohorts
from app.review.services.review import (
    assign_reviewer,
    change_embargo,
    complete_review,
    disputed_points,
    late_window,
    on_committee,
    reviewer_pool,
)
from app.review.services.summary import review_queue, review_summary
from app.review.web.disputes import DISPUTE_ACTS
from app.review.web.forms import back_to, carry_out, checked_form, form_day
from app.settings import Settings, review_clock
from app.submissions.domain.visibility import Access
from app.submissions.services.disclosures import (
    DisclosureError,
    bundle_files,
    compare_system_descriptions,
    read_bundle_file,
)
from app.submissions.services.points import labelled_points
from app.submissions.services.views import submission_summary
from app.submissions.web.access import member_submission, visible_submission
from app.web.api_errors import status_of
from app.web.deps import NowDep, SessionDep, SettingsDep
from app.web.forms import SubmissionFormRefused
from app.web.templating import templates

router = page_router()


def _user(session: Session, who: Principal) -> User:
    user = get_user(session, who.user_id)
    assert user is not None
    return user


def _remedies_context(
    session: Session,
    settings: Settings,
    submission: Submission,
    who: Principal | None,
    now: dt.datetime,
    facts: SubmissionFacts,
) -> dict[str, Any]:
    """The committee's remedies on the review section: reclassification, a dispute and
    its steps, a client-over-network endpoint's checks (rules §11.4–§11.6, §11.10)."""
    is_chair = who is not None and who.has(Scope.PUBLISH)
    return {
        "divisions": list(Division),
        "availabilities": list(Availability),
        "can_reclassify": is_chair and may_reclassify(facts) is None,
        # Open objections naming points: the chair may finalize the rest (rules §11.6).
        "disputed_points": sorted(disputed_points(session, submission)) if is_chair else [],
        "dispute": dispute_view(session, settings, dispute)
        if (dispute := dispute_of(session, submission)) is not None
        else None,
        "dispute_steps": (steps := offered_steps(session, settings, submission, who, now)),
        # The panel is chosen from them, on certification only.
        "neutral_members": [u.email for u in neutral_members(session)]
        if "certification" in steps
        else [],
        "endpoints": endpoint_views(session, settings, submission),
        **_corrections_context(session, submission, who),
    }


def _corrections_context(
    session: Session, submission: Submission, who: Principal | None
) -> dict[str, Any]:
    """The corrections of the non-result content (rules §11.7): the list, the upload form
    for the submitting organisation (or why it is not offered now), the chair's verdicts."""
    refusal = correction_refusal(session, submission, who)
    return {
        "corrections": [correction_view(c) for c in corrections_of(session, submission)],
        "can_correct": refusal is None,
        "correction_note": refusal.message
        if refusal is not None and actor_of(who, submission).own_organization
        else None,
    }


def review_context(
    session: Session,
    settings: Settings,
    submission: Submission,
    who: Principal | None,
    now: dt.datetime,
) -> dict[str, Any]:
    """What the review section of the submission page shows and offers to *who*."""
    user = _user(session, who) if who is not None else None
    objections = objections_of(session, submission)
    asking = actor_of(who, submission)
    facts = facts_of(session, submission)
    clock = review_clock(settings)
    is_chair = who is not None and who.has(Scope.PUBLISH)
    own_org = user is not None and user.organization_id == submission.organization_id
    return {
        "summary": review_summary(session, settings, submission),
        "objections": [
            {
                **objection_view(session, settings, o).model_dump(),
                "my_actions": [
                    ACTIONS[a]
                    for a in offered_actions(session, o, user, who.scopes if who else None)
                ],
            }
            for o in objections
        ],
        "types": list(TYPES.values()),
        # What the page offers is what the services allow (app.review.domain.policy).
        "can_object": user is not None
        and asking.committee
        and not own_org
        and may_object(
            clock,
            facts,
            now,
            late_ground=True,
            late=late_window(session, settings),
            on_committee=on_committee(session, settings, user.organization, now),
        )
        is None,
        "is_chair": is_chair,
        "is_reviewer": user is not None and submission.reviewer_id == user.id,
        # Finalizing without it takes the chair's override and its reason (rules §4.4).
        "review_incomplete": submission.for_review
        and submission.state == SubmissionState.PASSED_CHECKS
        and submission.review_completed_at is None,
        "can_complete_review": may_complete_review(
            asking, facts, completed=submission.review_completed_at is not None
        )
        is None,
        "can_change_embargo": may_change_embargo(asking, facts, None, None) is None,
        "withdraw_refusal": may_withdraw(asking, facts),
        "pool": [u.email for u in reviewer_pool(session, settings, submission, now)]
        if is_chair
        else [],
        "point_states": POINT_STATES,
        # Each point with the states this person may move it to now.
        "point_moves": {
            label: [
                st for st in POINT_STATES if may_set_point_state(asking, facts, p.state, st) is None
            ]
            for label, p in labelled_points(submission)
        },
        **_remedies_context(session, settings, submission, who, now, facts),
        "timeline": timeline_view(session, submission),
        "system_desc": compare_system_descriptions(settings, submission),
    }


def fraud_context(
    session: Session, settings: Settings, submission: Submission, who: Principal | None
) -> dict[str, Any] | None:
    """The fraud reports *who* may read on the submission, and whether they may file one
    (nobody signed in: nothing)."""
    if who is None:
        return None
    return {
        "reports": [report_view(settings, r, who) for r in reports_on(session, submission, who)],
        "can_report": may_report_fraud(actor_of(who, submission), facts_of(session, submission))
        is None,
        "outcomes": list(FraudOutcome),
        "findings": list(Screening),
        "divisions": list(Division),
        "availabilities": list(Availability),
    }


@router.post("/submissions/{public_id}/dispute/{step}")
def dispute_from_page(
    request: Request,
    public_id: str,
    step: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    panel: Annotated[list[str] | None, Form()] = None,
    body: str = Form("", max_length=text.LONG),
    recommendation: str = Form("", max_length=text.SHORT),
    ruling: str = Form("", max_length=text.SHORT),
    reason: str = Form("", max_length=text.REASON),
    csrf_token: str = Form(""),
) -> Response:
    """One step of a dispute (rules §11.6), by whoever the one rule lets take it."""
    verify_csrf(request, csrf_token)  # before anything else, as every form
    if step not in DISPUTE_ACTS:
        raise HTTPException(404, detail=f"no dispute step {step!r}")
    # The panel's neutral members hold the review scope only.
    scope = Scope.REVIEW if step == "recommendation" else Scope.SUBMIT
    who, submission = checked_form(
        request, session, public_id, csrf_token, DISPUTE_ACTS[step], scope
    )
    fields = StepFields(panel=tuple((panel or [])[:12]), body=body,
                        recommendation=recommendation, ruling=ruling, reason=reason)  # fmt: skip
    kept = {"body": body, "recommendation": recommendation, "ruling": ruling, "reason": reason}
    return carry_out(
        session, public_id,
        lambda: take_step(step, fields, session=session, settings=settings,
                          submission=submission, who=who, at=now),
        "dispute", form=f"dispute-{step}", kept=kept,
    )  # fmt: skip


@router.post("/submissions/{public_id}/endpoints/checks")
def endpoint_check_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    system_dir: str = Form("", max_length=text.SHORT),
    reachable: str = Form("", max_length=text.SHORT),
    detail: str = Form("", max_length=text.REASON),
    checked_on: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    """The chair records a check of a client-over-network endpoint (rules §11.10)."""
    who, submission = checked_form(request, session, public_id, csrf_token, Action.DECIDE)
    kept = {"system_dir": system_dir, "reachable": reachable, "detail": detail,
            "checked_on": checked_on}  # fmt: skip
    day = form_day(public_id, "endpoint-check", checked_on, kept) or now.date()
    return carry_out(
        session, public_id,
        lambda: record_reachability(session=session, settings=settings, submission=submission,
                                    who=who, system_dir=system_dir, reachable=reachable == "yes",
                                    detail=detail, checked_on=day, at=now),
        "endpoints", form="endpoint-check", kept=kept,
    )  # fmt: skip


@router.post("/submissions/{public_id}/objections")
def file_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    type: str = Form("", max_length=text.SHORT),
    title: str = Form("", max_length=text.SHORT),
    rule_cited: str = Form("", max_length=text.SHORT),
    evidence: str = Form("", max_length=text.LONG),
    point: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    who, submission = checked_form(request, session, public_id, csrf_token, Action.FILE_OBJECTION)
    return carry_out(
        session,
        public_id,
        lambda: file_objection(
            session=session,
            settings=settings,
            submission=submission,
            filer=_user(session, who),
            scopes=who.scopes,
            type_id=type,
            title=title,
            rule_cited=rule_cited,
            evidence=evidence,
            point_label=point or None,
            at=now,
        ),
        form="objection",
        kept={
            "type": type,
            "title": title,
            "rule_cited": rule_cited,
            "evidence": evidence,
            "point": point,
        },
    )


@router.get("/objections/{objection_id}")
def objection_page(request: Request, objection_id: str, session: SessionDep) -> Response:
    """An objection lives in its submission's review thread."""
    objection = get_objection(session, objection_id)
    if objection is None:
        raise HTTPException(404, detail=f"no objection with id {objection_id!r}")
    member_submission(request, session, objection.submission.public_id)
    return back_to(objection.submission.public_id, f"objection-{objection_id}")


@router.post("/objections/{objection_id}/actions")
def act_from_page(
    request: Request,
    objection_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    action: str = Form("", max_length=text.SHORT),
    body: str = Form("", max_length=text.LONG),
    csrf_token: str = Form(""),
) -> Response:
    verify_csrf(request, csrf_token)  # before anything is looked up
    objection = get_objection(session, objection_id)
    if objection is None:
        raise HTTPException(404, detail=f"no objection with id {objection_id!r}")
    public_id = objection.submission.public_id
    who, _ = checked_form(request, session, public_id, csrf_token, Action.ACT_ON_OBJECTION)
    return carry_out(
        session,
        public_id,
        lambda: act(
            session=session,
            settings=settings,
            objection=objection,
            user=_user(session, who),
            action=action,
            body=body,
            scopes=who.scopes,
            at=now,
        ),
        f"objection-{objection_id}",
        form=f"objection-{objection_id}",
        kept={"action": action, "body": body},
    )


@router.post("/submissions/{public_id}/review-complete")
def complete_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    notes: str = Form("", max_length=text.LONG),
    csrf_token: str = Form(""),
) -> Response:
    who, submission = checked_form(request, session, public_id, csrf_token, Action.COMPLETE_REVIEW)
    return carry_out(
        session,
        public_id,
        lambda: complete_review(
            session=session, submission=submission, reviewer=who, notes=notes, at=now
        ),
        form="review-complete",
        kept={"notes": notes},
    )


@router.post("/submissions/{public_id}/decisions")
def decide_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    action: str = Form("", max_length=text.SHORT),
    reason: str = Form("", max_length=text.REASON),
    override: str = Form("", max_length=text.SHORT),
    division: str = Form("", max_length=text.SHORT),
    availability: str = Form("", max_length=text.SHORT),
    target_availability_date: str = Form("", max_length=text.SHORT),
    objection: str = Form("", max_length=text.SHORT),
    undisputed: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    decision = Action.WITHDRAW if action == "withdraw" else Action.DECIDE
    who, submission = checked_form(request, session, public_id, csrf_token, decision)
    kept = {"action": action, "reason": reason, "override": override, "division": division,
            "availability": availability, "target_availability_date": target_availability_date,
            "objection": objection, "undisputed": undisputed}  # fmt: skip
    day = form_day(public_id, "decision", target_availability_date, kept)
    return carry_out(
        session,
        public_id,
        lambda: decide(
            session=session,
            settings=settings,
            submission=submission,
            action=action,
            actor=who.email,
            reason=reason or None,
            override=override == "yes",
            at=now,
            remedy=Remedy(division or None, availability or None, day),
            objection=objection or None,
            undisputed=undisputed == "yes",
        ),
        form="decision",
        kept=kept,
    )


@router.post("/submissions/{public_id}/embargo")
def embargo_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    embargo_date: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    who, submission = checked_form(request, session, public_id, csrf_token, Action.CHANGE_EMBARGO)
    day = form_day(public_id, "embargo", embargo_date, {"embargo_date": embargo_date})
    return carry_out(
        session,
        public_id,
        lambda: change_embargo(
            session=session,
            settings=settings,
            submission=submission,
            embargo=day,
            actor=who.email,
            who=who,
            at=now,
        ),
        form="embargo",
        kept={"embargo_date": embargo_date},
    )


@router.post("/submissions/{public_id}/preview-extension")
def preview_extension_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    new_date: str = Form("", max_length=text.SHORT),
    reason: str = Form("", max_length=text.REASON),
    csrf_token: str = Form(""),
) -> Response:
    """The submitter asks for the Preview window's one extension (rules §11.10)."""
    who, submission = checked_form(
        request, session, public_id, csrf_token, Action.ASK_PREVIEW_EXTENSION
    )
    kept = {"new_date": new_date, "reason": reason}
    day = form_day(public_id, "preview-extension", new_date, kept)
    if day is None:
        raise SubmissionFormRefused(
            public_id, "preview-extension", "give the new date the result is Available by", 422,
            kept,
        )  # fmt: skip
    return carry_out(
        session,
        public_id,
        lambda: ask_extension(session=session, settings=settings, who=who,
                              submission=submission, new_date=day, reason=reason, now=now),
        "standing",
        form="preview-extension",
        kept=kept,
    )  # fmt: skip


@router.post("/submissions/{public_id}/preview-extension/decision")
def preview_decision_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    decision: str = Form("", max_length=text.SHORT),
    note: str = Form("", max_length=text.REASON),
    csrf_token: str = Form(""),
) -> Response:
    """The chair grants or refuses the extension asked for."""
    who, submission = checked_form(
        request, session, public_id, csrf_token, Action.DECIDE_PREVIEW_EXTENSION
    )
    if decision not in ("grant", "refuse"):
        raise SubmissionFormRefused(
            public_id, "preview-decision", "decide: grant or refuse", 422, {"note": note}
        )
    return carry_out(
        session,
        public_id,
        lambda: decide_extension(session=session, settings=settings, who=who,
                                 submission=submission, grant=decision == "grant", note=note,
                                 now=now),
        "standing",
        form="preview-decision",
        kept={"note": note},
    )  # fmt: skip


@router.post("/submissions/{public_id}/reviewer")
def reviewer_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    email: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    who, submission = checked_form(request, session, public_id, csrf_token, Action.ASSIGN_REVIEWER)
    chosen = None
    if email.strip():
        chosen = user_by_email(session, email)
        if chosen is None:
            raise SubmissionFormRefused(public_id, "", f"no user {email!r}", 404)
    return carry_out(
        session,
        public_id,
        lambda: assign_reviewer(
            session, settings, submission, reviewer=chosen, actor=who.email, at=now
        ),
    )


@router.post("/submissions/{public_id}/points/state")
def point_state_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    point: str = Form("", max_length=text.SHORT),
    state: str = Form("", max_length=text.SHORT),
    reason: str = Form("", max_length=text.REASON),
    csrf_token: str = Form(""),
) -> Response:
    """The chair's point decisions, and the submitter's withdrawal of a faulty point (the
    rule of who may do which is ``policy.may_set_point_state``)."""
    move = Action.WITHDRAW_POINT if state == "withdrawn" else Action.JUDGE_POINT
    who, submission = checked_form(request, session, public_id, csrf_token, move)
    return carry_out(
        session,
        public_id,
        lambda: set_point_state(
            session=session,
            settings=settings,
            submission=submission,
            point_label=point,
            state=state,
            who=who,
            reason=reason,
            at=now,
        ),
        form="point-state",
        kept={"point": point, "state": state, "reason": reason},
    )


@router.post("/submissions/{public_id}/withdraw")
def withdraw_from_page(
    request: Request,
    public_id: str,
    session: SessionDep,
    now: NowDep,
    settings: SettingsDep,
    reason: str = Form("", max_length=text.REASON),
    csrf_token: str = Form(""),
) -> Response:
    """The submitting organisation withdraws its submission (rules §11.7)."""
    who, submission = checked_form(request, session, public_id, csrf_token, Action.WITHDRAW)
    return carry_out(
        session,
        public_id,
        lambda: withdraw(
            session=session,
            settings=settings,
            submission=submission,
            who=who,
            reason=reason,
            at=now,
        ),
        form="withdraw",
        kept={"reason": reason},
    )


@router.get("/submissions/{public_id}/files", response_class=HTMLResponse)
def files_page(
    request: Request, public_id: str, session: SessionDep, settings: SettingsDep, path: str = ""
) -> Response:
    """The bundle's files, and one text file (configs, disclosures, logs) shown as text."""
    submission = visible_submission(session, principal_of(request), public_id, Access.FULL)
    content = None
    if path:
        try:
            content = read_bundle_file(settings, submission, path)
        except DisclosureError as exc:
            raise HTTPException(status_of(exc), detail=exc.message) from exc
    return templates.TemplateResponse(
        request,
        "submissions/files.html",
        {
            "s": submission_summary(submission, settings),
            "files": bundle_files(settings, submission),
            "path": path,
            "content": content,
        },
    )


def _queue_page(
    request: Request,
    session: Session,
    settings: Settings,
    who: Principal,
    plan: CohortPlan | None = None,
    done: bool = False,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    rows = review_queue(session, settings, in_review(session), who.user_id)
    can_publish = who.has(Scope.PUBLISH)
    now = request.app.state.clock()
    upcoming = upcoming_cohorts(session, settings, now)
    plans = [plan] if plan is not None else []
    if can_publish and plan is None and error is None:
        # What is lined up: each upcoming cohort as it would be released at its time.
        plans = [
            release_plan(session=session, settings=settings, cohort_id=str(cohort), at=now,
                         actor=who.email, confirmed=False)
            for cohort in upcoming
        ]  # fmt: skip
    return templates.TemplateResponse(
        request,
        "review/review.html",
        {
            "rows": rows,
            "can_publish": can_publish,
            "plans": plans,
            "done": done,
            "publish_error": error,
            "next_cohort": plan.cohort if plan is not None else upcoming[0],
        },
        status_code=status_code,
    )


@router.get("/review", response_class=HTMLResponse)
def review_queue_page(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    who = principal_of(request)
    if who is None:
        return RedirectResponse("/login?next=/review", status_code=303)
    if not who.has(Scope.REVIEW):
        raise HTTPException(403, detail="the review queue is the committee's")
    return _queue_page(request, session, settings, who)


@router.post("/review/publish", response_class=HTMLResponse)
def publish_from_page(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    now: NowDep,
    cohort: str = Form("", max_length=text.SHORT),
    confirm: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    """The chair publishes a cohort from the browser in two steps: first what it would
    publish (bundles and result ids), then, confirmed, the release itself, credited to
    the chair; refused before its time or for any cohort but the one due."""
    verify_csrf(request, csrf_token)
    who = signed_in_as(request, Scope.PUBLISH)
    try:
        plan = release_plan(
            session=session, settings=settings, cohort_id=cohort, at=now, actor=who.email,
            confirmed=confirm == "yes",
        )  # fmt: skip
    except Refused as exc:
        session.rollback()
        return _queue_page(
            request, session, settings, who, error=exc.message, status_code=status_of(exc)
        )
    session.commit()
    return _queue_page(request, session, settings, who, plan=plan, done=confirm == "yes")


@router.get("/inbox", response_class=HTMLResponse)
def inbox_page(request: Request, session: SessionDep) -> Response:
    who = principal_of(request)
    if who is None:
        return RedirectResponse("/login?next=/inbox", status_code=303)
    return templates.TemplateResponse(
        request, "review/inbox.html", {"notifications": inbox_view(session, who.user_id).data}
    )


@router.post("/inbox/read")
def inbox_read(request: Request, session: SessionDep, csrf_token: str = Form("")) -> Response:
    verify_csrf(request, csrf_token)
    who = signed_in_as(request)
    mark_read(session, who.user_id)
    session.commit()
    return RedirectResponse("/inbox", status_code=303)
