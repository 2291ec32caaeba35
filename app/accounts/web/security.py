"""Who is asking (Bearer token or session cookie), scope checks, CSRF and headers."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from markupsafe import Markup
from sqlalchemy.orm import Session
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as ASGIScope

from app.accounts.services.accounts import Principal, principal_for_session, principal_for_token
from app.core.authorization import Scope
from app.core.refusals import Refused
from app.web.api_errors import status_of
from app.web.deps import SessionDep

SESSION_COOKIE = "epp_session"
# A random id for a browser before it signs in: the CSRF token of its forms is bound to
# it, and to the session once there is one (a new token at every sign-in).
BROWSER_COOKIE = "epp_browser"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def cookie_name(request: Request, base: str) -> str:
    """Over https the cookies take the ``__Host-`` prefix: no subdomain may set them."""
    return f"__Host-{base}" if request.url.scheme == "https" else base


def read_cookie(request: Request, base: str) -> str | None:
    return request.cookies.get(cookie_name(request, base))


def set_cookie(
    response: Response, request: Request, base: str, value: str, max_age: int | None = None
) -> None:
    response.set_cookie(
        cookie_name(request, base),
        value,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def delete_cookie(response: Response, request: Request, base: str) -> None:
    response.delete_cookie(
        cookie_name(request, base), path="/", secure=request.url.scheme == "https"
    )


# Where the JSON APIs live: the portal's own and the official Submission API.
API_PREFIXES = ("/api/", "/submission-api/")


def is_api(path: str) -> bool:
    return path.startswith(API_PREFIXES)


def principal(request: Request, session: SessionDep) -> Principal | None:
    if hasattr(request.state, "principal"):  # worked out once per request
        cached: Principal | None = request.state.principal
        return cached
    found: Principal | None = None
    auth = request.headers.get("authorization", "")
    # The official CLI sends its token as X-API-Key: the same tokens, the same scopes.
    token = auth[7:].strip() if auth.lower().startswith("bearer ") else None
    token = token or request.headers.get("x-api-key", "").strip() or None
    if token is not None:
        found = principal_for_token(session, token)
        session.commit()  # keeps the token's last use
        if found is None:
            raise HTTPException(
                401,
                detail="the API token is unknown or revoked",
                headers={"WWW-Authenticate": "Bearer"},
            )
    elif cookie := read_cookie(request, SESSION_COOKIE):
        found = principal_for_session(session, cookie)
        if found is not None and request.method not in SAFE_METHODS:
            # A browser's cookie rides along on any site's request: an API call that
            # changes something with it must also carry the page's token.
            if is_api(request.url.path) and not csrf_valid(
                request, request.headers.get(CSRF_HEADER)
            ):
                raise HTTPException(
                    403,
                    detail="a signed-in browser's API call needs the X-CSRF-Token header "
                    "(its page's token); scripts send an API token (Authorization: Bearer)",
                )
    request.state.principal = found
    return found


PrincipalDep = Annotated[Principal | None, Depends(principal)]


def require(scope: Scope) -> Callable[..., Principal]:
    def check(who: PrincipalDep) -> Principal:
        if who is None:
            raise HTTPException(
                401, detail="sign in or send an API token", headers={"WWW-Authenticate": "Bearer"}
            )
        if not who.has(scope):
            raise HTTPException(403, detail=f"this needs the {scope.value!r} scope")
        return who

    return check


def principal_of(request: Request) -> Principal | None:
    return getattr(request.state, "principal", None)


def signed_in_as(request: Request, scope: Scope = Scope.SUBMIT) -> Principal:
    """For a page's form: who is signed in, if they hold *scope* (401, 403 otherwise)."""
    who = principal_of(request)
    if who is None:
        raise HTTPException(401, detail="sign in first")
    if not who.has(scope):
        raise HTTPException(403, detail=f"this needs the {scope.value!r} scope")
    return who


def signed_in(who: PrincipalDep) -> Principal:
    """Whoever it is, signed in or with a token: what they may do is the one rule's."""
    if who is None:
        raise HTTPException(
            401, detail="sign in or send an API token", headers={"WWW-Authenticate": "Bearer"}
        )
    return who


SignedInDep = Annotated[Principal, Depends(signed_in)]
MemberDep = Annotated[Principal, Depends(require(Scope.SUBMIT))]
ReviewerDep = Annotated[Principal, Depends(require(Scope.REVIEW))]
ChairDep = Annotated[Principal, Depends(require(Scope.PUBLISH))]


def csrf_token(request: Request) -> str:
    """The token the page's forms carry: bound to the browser's session (or, before it
    signs in, to its browser id) and signed with the portal's key."""
    binding = read_cookie(request, SESSION_COOKIE) or getattr(request.state, "browser", "")
    if not binding:
        return ""
    key: bytes = request.app.state.csrf_key
    return hmac.new(key, binding.encode(), hashlib.sha256).hexdigest()


def csrf_input(request: Request) -> Markup:
    return Markup('<input type="hidden" name="{}" value="{}">').format(
        CSRF_FIELD, csrf_token(request)
    )


def csrf_valid(request: Request, submitted: str | None) -> bool:
    expected = csrf_token(request)
    return bool(expected and submitted and hmac.compare_digest(expected, submitted))


def verify_csrf(request: Request, submitted: str | None) -> None:
    """Forms carry the token from their page; a cross-site post cannot know it."""
    if not csrf_valid(request, submitted):
        raise HTTPException(
            403,
            detail="the form's security token is missing or stale; reload the page and try again",
        )


# The one place other sites may frame: a chart of a public view, with no cookie or form.
EMBED_PREFIX = "/embed/"
EMBED_CSP = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; frame-ancestors *; base-uri 'none'; form-action 'none'"
)


PAGE_CSP = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)


# An answer to a request that carries credentials is for its caller alone: no shared cache
# keeps it, and no browser keeps it on disk (static files keep their own, immutable).
PRIVATE = "private, no-store"
CREDENTIAL_HEADERS = ("authorization", "x-api-key")


def carries_credentials(request: Request) -> bool:
    return any(request.headers.get(h) for h in CREDENTIAL_HEADERS) or bool(
        read_cookie(request, SESSION_COOKIE)
    )


def apply_security_headers(request: Request, headers: MutableHeaders) -> None:
    """The headers every response carries, error pages included."""
    if not request.url.path.startswith("/static/") and (
        carries_credentials(request) or "set-cookie" in headers
    ):
        headers["Cache-Control"] = PRIVATE
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "same-origin")
    embedded = request.url.path.startswith(EMBED_PREFIX)
    headers.setdefault("Content-Security-Policy", EMBED_CSP if embedded else PAGE_CSP)
    if request.url.scheme == "https":
        headers.setdefault("Strict-Transport-Security", "max-age=31536000; includeSubDomains")


def security_headers(request: Request, response: Response) -> Response:
    apply_security_headers(request, response.headers)
    return response


class BrowserIdAndHeaders:
    """Give every browser an id for its forms' tokens, and every response the security
    headers.

    A plain ASGI middleware: it only edits the headers of the response's start message, so
    a streamed body passes through untouched (Starlette's ``BaseHTTPMiddleware`` relays
    it through a second stream that, under load, could end a download before its body)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        browser = read_cookie(request, BROWSER_COOKIE)
        request.state.browser = browser or secrets.token_urlsafe(24)
        # Only pages carry forms; a fetch or an asset answered while the cookie is missing
        # must not set a second id that overwrites the one a page's form was just bound to.
        may_set_id = browser is None and not request.url.path.startswith(EMBED_PREFIX)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if may_set_id and headers.get("content-type", "").startswith("text/html"):
                    headers.append("set-cookie", browser_cookie(request))
                apply_security_headers(request, headers)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def browser_cookie(request: Request) -> str:
    """The Set-Cookie value of the browser's id, as ``set_cookie`` writes every cookie."""
    carrier = Response()
    set_cookie(carrier, request, BROWSER_COOKIE, request.state.browser)
    return carrier.headers["set-cookie"]


def page_router() -> APIRouter:
    """A feature's pages: each knows who is signed in (for the header), from the cookie."""
    return APIRouter(include_in_schema=False, dependencies=[Depends(principal)])


def act_from_form(
    request: Request,
    session: Session,
    csrf_token: str,
    work: Callable[[Principal], object],
    sign_in_to: str,
) -> None:
    """A signed-in user's page form: its token checked, who is signed in (401 saying what
    signing in is for), the service call, committed; a refusal is said in words on the
    error page with nothing kept. The caller says where the browser goes next."""
    verify_csrf(request, csrf_token)
    who = principal_of(request)
    if who is None:
        raise HTTPException(401, detail=f"sign in to {sign_in_to}")
    try:
        work(who)
    except Refused as refused:
        session.rollback()
        raise HTTPException(status_of(refused), detail=refused.message) from refused
    session.commit()
