"""A submission's page: what every feature knows of one submission, together (its
checks, points, re-counts, reproductions and review), for those who may see it."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from app.accounts.services.authorization import actor_of
from app.accounts.web.security import page_router, principal_of
from app.checks.domain.findings import Severity
from app.checks.services.findings import group_findings
from app.core.authorization import Action, may
from app.core.regions import Offline
from app.db.models import Submission
from app.dossier.services.curves import CurveView, curve_view
from app.dossier.services.standing import submission_standing
from app.results.services.public import PRELIMINARY_FOOTNOTE
from app.review.web.pages import fraud_context, review_context
from app.runs.services.reproductions import list_reproductions, reproduction_refusal
from app.runs.services.retokenization import (
    findings_of,
    list_retokenizations,
    missing_tokenizers,
)
from app.runs.services.views import reproduction_view, retokenization_view
from app.settings import Settings, review_clock
from app.submissions.domain.visibility import Access
from app.submissions.services.artifacts import latest_events
from app.submissions.services.disclosures import system_disclosures
from app.submissions.services.views import latest_check_run, submission_summary
from app.submissions.services.visibility import access_to
from app.submissions.web.access import visible_submission
from app.web.deps import SessionDep, SettingsDep, get_now
from app.web.forms import SubmissionFormRefused
from app.web.templating import templates

router = page_router()

SEVERITY_LABELS = {"error": "Errors", "warning": "Warnings", "info": "Passed checks"}


def render_submission(
    request: Request,
    session: SessionDep,
    settings: Settings,
    public_id: str,
    *,
    duplicate: bool = False,
    refused: SubmissionFormRefused | None = None,
) -> Response:
    who = principal_of(request)
    submission = visible_submission(session, who, public_id)
    level = access_to(session, who, submission)
    today = review_clock(settings).local_date(get_now(request))
    standing = submission_standing(session, settings, submission, today)
    if level < Access.FULL:
        # The public sees a provisional result's curves, nothing of its review (§11.9).
        return templates.TemplateResponse(
            request,
            "dossier/submission_public.html",
            {
                "s": submission_summary(submission, settings),
                "curves": [curve_view(c, active_only=True) for c in submission.curves],
                "footnote": PRELIMINARY_FOOTNOTE,
                "standing": standing,
            },
        )
    run = latest_check_run(session, submission)
    rows = list(run.findings) if run else []
    reproductions = list_reproductions(session, submission)
    curves = [curve_view(c, reproductions) for c in submission.curves]
    return templates.TemplateResponse(
        request,
        "dossier/submission.html",
        {
            "disclosures": system_disclosures(settings, submission),
            # The archive itself: its organisation, the committee and the chair only.
            "may_download_archive": level >= Access.REVIEW,
            "missing_tokenizers": missing_tokenizers(settings, submission),
            **_recounts(session, submission),
            **_reproducing(settings, submission, curves, refused),
            "s": submission_summary(submission, settings),
            "standing": standing,
            # The Preview extension's forms: the one rule says who is offered which.
            "may_ask_extension": may(actor_of(who, submission), Action.ASK_PREVIEW_EXTENSION)
            is None,
            "may_decide_extension": may(actor_of(who, submission), Action.DECIDE_PREVIEW_EXTENSION)
            is None,
            "run": run,
            "groups": group_findings(rows),
            "passed_count": sum(1 for r in rows if r.severity == "info"),
            "passed_groups": group_findings([r for r in rows if r.severity == "info"], True),
            "severity_labels": SEVERITY_LABELS,
            "curves": curves,
            "duplicate": duplicate,
            "reproductions": [
                reproduction_view(r, private=level >= Access.REVIEW) for r in reproductions
            ],
            "has_events": bool(latest_events(session, submission)),
            # The review record is the members' (rules §11.9): not for the public, even
            # once the results, code and artifacts are.
            "member": level >= Access.REVIEW,
            # The forms shown are the acts the one rule allows this caller.
            "may_recount": may(actor_of(who, submission), Action.RECOUNT) is None,
            "may_reproduce": may(actor_of(who, submission), Action.REPRODUCE) is None,
            "may_attest_same_system": may(actor_of(who, submission), Action.ATTEST_SAME_SYSTEM)
            is None,
            "max_reproduction_runs": settings.reproduction_max_runs,
            # What the page offers now is what the services would decide at the app's now.
            "review": review_context(session, settings, submission, who, get_now(request))
            if level >= Access.REVIEW
            else None,
            "fraud": fraud_context(session, settings, submission, who),
            "refused_form": refused.form if refused else None,
            "review_error": refused.told if refused and refused.form != "reproduce" else None,
            "kept": {refused.form: refused.kept} if refused else {},
        },
        status_code=refused.status if refused else 200,
    )


def _recounts(session: Session, submission: Submission) -> dict[str, Any]:
    """The re-counts of the submission's points, and the totals of the latest one of each
    point (its errors belong in the verdict too)."""
    retokenizations = [
        retokenization_view(r, findings_of(session, r))
        for r in list_retokenizations(session, submission)
    ]
    latest_recounts = {r.point: r for r in reversed(retokenizations) if r.finished}
    recount_findings = [f for r in latest_recounts.values() for f in r.findings]
    return {
        "retokenizations": retokenizations,
        "recount_totals": {
            "points": len(latest_recounts),
            "errors": sum(f.severity == Severity.ERROR for f in recount_findings),
            "warnings": sum(f.severity == Severity.WARNING for f in recount_findings),
        },
    }


def _reproducing(
    settings: Settings,
    submission: Submission,
    curves: list[CurveView],
    refused: SubmissionFormRefused | None,
) -> dict[str, Any]:
    """What the reproduction form offers: the points a request would be taken for (the
    same predicate refuses it), or why none is, and a refused request again."""
    # Each curve's reason it cannot be reproduced (None: it can), asked once per curve.
    refusals = [reproduction_refusal(settings, submission, row) for row in submission.curves]
    return {
        "reproducible_points": [
            f"{c.system_dir}/{c.benchmark_model}/{p.dir}"
            for c, refusal in zip(curves, refusals, strict=True)
            if refusal is None
            for p in c.points
            if p.offline != Offline.DEDICATED
        ],
        "reproduction_blocked": next((r for r in refusals if r is not None), None),
        # A refused form: its refusal beside it, and what it held filled in again.
        "reproduction_error": refused if refused and refused.form == "reproduce" else None,
    }


@router.get("/submissions/{public_id}", response_class=HTMLResponse)
def submission_page(
    request: Request, public_id: str, session: SessionDep, settings: SettingsDep, duplicate: int = 0
) -> Response:
    return render_submission(request, session, settings, public_id, duplicate=bool(duplicate))


def form_refused(request: Request, exc: Exception) -> Response:
    """A refused form of the page (review, reproduction): the page again, saying why
    (main.py wires it)."""
    assert isinstance(exc, SubmissionFormRefused)
    with request.app.state.db.session() as session:
        return render_submission(
            request, session, request.app.state.settings, exc.public_id, refused=exc
        )
