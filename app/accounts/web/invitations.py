"""Accounts a newcomer can get, in the browser: the chair's invitations page, the
one-time link where the invited person sets a password, and the request form the
sign-in page links to (app.accounts.services.invitations)."""

from __future__ import annotations

import secrets

from fastapi import Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts.services.accounts import (
    AccountError,
    Principal,
    get_user,
    organisations_like,
    start_session,
)
from app.accounts.services.invitations import (
    INVITATION_LIFETIME,
    OrganisationChoice,
    accept,
    decline,
    invitation_for,
    invite,
    open_invitations,
    open_requests,
    request_account,
    revoke,
)
from app.accounts.web.pages import sign_in_first
from app.accounts.web.security import (
    BROWSER_COOKIE,
    SESSION_COOKIE,
    page_router,
    principal_of,
    set_cookie,
    verify_csrf,
)
from app.core import text_limits as text
from app.core.authorization import Role, invitable_roles
from app.web.api_errors import status_of
from app.web.deps import SessionDep
from app.web.ratelimit import enforce
from app.web.templating import templates

router = page_router()
# Requests for an account come from people nobody knows yet: a few an hour per client.
REQUESTS_PER_HOUR = 5


def _inviter(request: Request) -> Principal | None:
    """Who is signed in and may invite someone (None: nobody is signed in)."""
    who = principal_of(request)
    if who is not None and not invitable_roles(who.scopes):
        raise HTTPException(403, detail="only the chair or an administrator may invite")
    return who


def _invitations_page(
    request: Request,
    session: SessionDep,
    who: Principal,
    *,
    problem: AccountError | None = None,
    invited: dict[str, object] | None = None,
    kept: dict[str, str] | None = None,
) -> Response:
    roles = sorted(invitable_roles(who.scopes), key=list(Role).index)
    requests = open_requests(session)
    return templates.TemplateResponse(
        request,
        "accounts/invitations.html",
        {
            "problem": problem,
            # The organisations the inviter must choose between (join one, or a new one).
            "choices": problem.candidates if isinstance(problem, OrganisationChoice) else [],
            "invited": invited,
            "kept": kept or {},
            "roles": roles,
            "invitations": open_invitations(session),
            "requests": requests,
            "alike": {
                r.id: [o.name for o in organisations_like(session, r.organization)]
                for r in requests
            },  # fmt: skip
            "lifetime_days": INVITATION_LIFETIME.days,
        },
        status_code=status_of(problem) if problem else 200,
    )


@router.get("/invitations", response_class=HTMLResponse)
def invitations_page(request: Request, session: SessionDep) -> Response:
    """The chair's invitations: invite someone, the open links, the requests waiting."""
    who = _inviter(request)
    if who is None:
        return sign_in_first(request)
    return _invitations_page(request, session, who)


@router.post("/invitations")
def send_invitation(
    request: Request,
    session: SessionDep,
    email: str = Form("", max_length=text.SHORT),
    role: str = Form("submitter", max_length=text.SHORT),
    organization: str = Form("", max_length=text.SHORT),
    join_organization: str = Form("", max_length=text.SHORT),
    new_organization: str = Form("", max_length=text.SHORT),
    request_id: str = Form("", max_length=text.SHORT),
    csrf_token: str = Form(""),
) -> Response:
    """Invite someone. An organisation that exists, or looks like one that does, is
    joined only when the chair says so (``join_organization``), or made anew only when
    the chair confirms it (``new_organization``); else the page asks."""
    verify_csrf(request, csrf_token)
    who = _inviter(request)
    if who is None:
        return sign_in_first(request)
    kept = {"email": email, "role": role, "organization": organization, "request_id": request_id}
    try:
        if role not in {r.value for r in Role}:
            raise AccountError("bad-role", f"{role!r} is not a role")
        made = invite(
            session=session,
            settings=request.app.state.settings,
            scopes=who.scopes,
            inviter=get_user(session, who.user_id),
            email=email,
            role=Role(role),
            organization=organization,
            join_organization=join_organization or None,
            new_organization=new_organization == "1",
            request_id=int(request_id) if request_id.isdigit() else None,
        )
    except AccountError as problem:
        session.rollback()
        return _invitations_page(request, session, who, problem=problem, kept=kept)
    session.commit()
    # The portal's configured public address, never the request's Host header.
    link = request.app.state.settings.public_link(made.link)
    shown = {"email": made.invitation.email, "link": link, "emailed": made.emailed}
    return _invitations_page(request, session, who, invited=shown)


@router.post("/invitations/{invitation_id}/revoke")
def revoke_invitation(
    request: Request, session: SessionDep, invitation_id: int, csrf_token: str = Form("")
) -> Response:
    verify_csrf(request, csrf_token)
    if _inviter(request) is None:
        return sign_in_first(request)
    revoke(session, invitation_id)
    session.commit()
    return RedirectResponse("/invitations", status_code=303)


@router.post("/account-requests/{request_id}/decline")
def decline_request(
    request: Request, session: SessionDep, request_id: int, csrf_token: str = Form("")
) -> Response:
    verify_csrf(request, csrf_token)
    if _inviter(request) is None:
        return sign_in_first(request)
    decline(session, request_id)
    session.commit()
    return RedirectResponse("/invitations", status_code=303)


def _join_page(
    request: Request,
    session: SessionDep,
    secret: str,
    problem: AccountError | None = None,
    name: str = "",
) -> Response:
    try:
        invitation = invitation_for(session, secret)
    except AccountError as dead:
        return templates.TemplateResponse(
            request, "accounts/join.html", {"dead": dead, "invitation": None},
            status_code=status_of(dead),
        )  # fmt: skip
    return templates.TemplateResponse(
        request,
        "accounts/join.html",
        {"dead": None, "invitation": invitation, "problem": problem, "name": name},
        status_code=status_of(problem) if problem else 200,
    )


@router.get("/join/{secret}", response_class=HTMLResponse)
def join_form(request: Request, session: SessionDep, secret: str) -> Response:
    """Where an invited person chooses a password (the link works once)."""
    return _join_page(request, session, secret)


@router.post("/join/{secret}")
def join(
    request: Request,
    session: SessionDep,
    secret: str,
    display_name: str = Form("", max_length=text.SHORT),
    password: str = Form("", max_length=text.SECRET),
    repeated: str = Form("", max_length=text.SECRET),
    csrf_token: str = Form(""),
) -> Response:
    verify_csrf(request, csrf_token)
    enforce(request, "join", request.app.state.settings.login_attempts_per_minute, 60)
    try:
        user = accept(session=session, secret=secret, password=password, repeated=repeated,
                      display_name=display_name)  # fmt: skip
    except AccountError as problem:
        session.rollback()
        return _join_page(request, session, secret, problem, display_name)
    cookie = start_session(session=session, user=user)
    session.commit()
    # Signed in at once; a submitter's next step is an upload.
    target = "/upload?welcome=1" if user.role == Role.SUBMITTER else "/?welcome=1"
    response = RedirectResponse(target, status_code=303)
    set_cookie(response, request, SESSION_COOKIE, cookie, max_age=12 * 3600)
    set_cookie(response, request, BROWSER_COOKIE, secrets.token_urlsafe(24))
    return response


@router.get("/request-account", response_class=HTMLResponse)
def request_form(request: Request) -> Response:
    """Ask the chair for an account (linked from the sign-in page)."""
    return templates.TemplateResponse(
        request, "accounts/request.html", {"problem": None, "kept": {}, "sent": False}
    )


@router.post("/request-account")
def send_request(
    request: Request,
    session: SessionDep,
    email: str = Form("", max_length=text.SHORT),
    display_name: str = Form("", max_length=text.SHORT),
    organization: str = Form("", max_length=text.SHORT),
    message: str = Form("", max_length=text.LONG),
    csrf_token: str = Form(""),
) -> Response:
    verify_csrf(request, csrf_token)
    enforce(request, "request-account", REQUESTS_PER_HOUR, 3600)
    kept = {"email": email, "display_name": display_name, "organization": organization,
            "message": message}  # fmt: skip
    try:
        request_account(session=session, email=email, display_name=display_name,
                        organization=organization, message=message)  # fmt: skip
    except AccountError as problem:
        session.rollback()
        return templates.TemplateResponse(
            request, "accounts/request.html", {"problem": problem, "kept": kept, "sent": False},
            status_code=status_of(problem),
        )  # fmt: skip
    session.commit()
    return templates.TemplateResponse(
        request, "accounts/request.html", {"problem": None, "kept": kept, "sent": True}
    )
