"""Signing in and out."""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

from fastapi import Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts.services.accounts import authenticate, end_session, start_session
from app.accounts.web.security import (
    BROWSER_COOKIE,
    SESSION_COOKIE,
    delete_cookie,
    page_router,
    read_cookie,
    set_cookie,
    verify_csrf,
)
from app.core import text_limits as text
from app.web.deps import SessionDep
from app.web.ratelimit import client_key, enforce
from app.web.templating import templates

router = page_router()


def sign_in_first(request: Request) -> RedirectResponse:
    return RedirectResponse(f"/login?{urlencode({'next': request.url.path})}", status_code=303)


def _local_path(target: str) -> str:
    """Only a path on this site (no scheme, no host): an open redirect otherwise."""
    return target if target.startswith("/") and not target.startswith("//") else "/"


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> Response:
    return templates.TemplateResponse(
        request, "accounts/login.html", {"error": None, "next": _local_path(next)}
    )


@router.post("/login")
def login(
    request: Request,
    session: SessionDep,
    email: str = Form("", max_length=text.SHORT),
    password: str = Form("", max_length=text.SECRET),
    next: str = Form("/", max_length=text.URL),
    csrf_token: str = Form(""),
) -> Response:
    verify_csrf(request, csrf_token)
    # Failed attempts are counted per client and account (and per client over all
    # accounts), never per account alone: a stranger's guesses cannot lock the owner out,
    # and the right password is never counted against anyone.
    limit = request.app.state.settings.login_attempts_per_minute
    pair = f"{client_key(request)}|{email.strip().lower()}"
    enforce(request, "sign-in", limit, 60, key=pair, count=False)
    enforce(request, "sign-in", 5 * limit, 60, count=False)
    user = authenticate(session=session, email=email, password=password)
    if user is None:
        enforce(request, "sign-in", limit, 60, key=pair)
        enforce(request, "sign-in", 5 * limit, 60)
        return templates.TemplateResponse(
            request,
            "accounts/login.html",
            {"error": "Wrong e-mail or password.", "next": _local_path(next), "email": email},
            status_code=401,
        )
    secret = start_session(session=session, user=user)
    session.commit()
    response = RedirectResponse(_local_path(next), status_code=303)
    set_cookie(response, request, SESSION_COOKIE, secret, max_age=12 * 3600)
    # A new browser id too: nothing bound before the sign-in carries over (fixation).
    set_cookie(response, request, BROWSER_COOKIE, secrets.token_urlsafe(24))
    return response


@router.post("/logout")
def logout(request: Request, session: SessionDep, csrf_token: str = Form("")) -> Response:
    verify_csrf(request, csrf_token)
    if cookie := read_cookie(request, SESSION_COOKIE):
        end_session(session=session, cookie=cookie)
        session.commit()
    response = RedirectResponse("/", status_code=303)
    delete_cookie(response, request, SESSION_COOKIE)
    return response
