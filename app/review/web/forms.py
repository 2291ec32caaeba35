"""What every review form of the submission page does: its checks (the CSRF token, who
signed in, the one rule), its service call (committed and back to the page, or the page
again with the refusal beside the form, filled in as sent), and its date fields."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session

from app.accounts.services.accounts import Principal
from app.accounts.web.security import signed_in_as, verify_csrf
from app.core.authorization import Action, Scope
from app.core.refusals import Refused
from app.db.models import Submission
from app.submissions.web.access import acting_on
from app.web.forms import SubmissionFormRefused


def back_to(public_id: str, anchor: str = "review") -> RedirectResponse:
    return RedirectResponse(f"/submissions/{public_id}#{anchor}", status_code=303)


def checked_form(
    request: Request,
    session: Session,
    public_id: str,
    csrf: str,
    action: Action,
    scope: Scope = Scope.SUBMIT,
) -> tuple[Principal, Submission]:
    """A review form's checks: its CSRF token, who signed in (holding *scope*), and that
    the one rule lets them take *action* on the submission."""
    verify_csrf(request, csrf)
    who = signed_in_as(request, scope)
    return who, acting_on(session, who, public_id, action)


def carry_out(
    session: Session,
    public_id: str,
    work: Callable[[], object],
    anchor: str = "review",
    *,
    form: str = "",
    kept: dict[str, str] | None = None,
) -> RedirectResponse:
    """Run a form's service call: commit and back to the page, or show why it was refused
    (with *form* filled in again from *kept*)."""
    try:
        work()
    except Refused as exc:
        session.rollback()
        raise SubmissionFormRefused.of(public_id, form, exc, kept or {}) from exc
    session.commit()
    return back_to(public_id, anchor)


def form_day(public_id: str, form: str, written: str, kept: dict[str, str]) -> dt.date | None:
    """A date field of a form: None when left empty, else refused unless ISO 8601."""
    if not written.strip():
        return None
    try:
        return dt.date.fromisoformat(written.strip())
    except ValueError:
        raise SubmissionFormRefused(
            public_id, form, f"{written!r} is not a date (YYYY-MM-DD)", 422, kept
        ) from None
