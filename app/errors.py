"""Errors as the person asking can read them: an HTML page for a browser, JSON for the API.

A GET of an address that only takes form posts (a page form posted, then reloaded from the
address bar) goes to the page that form belongs to rather than a bare 405.
"""

from __future__ import annotations

import logging
from http import HTTPStatus

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Match

from app.accounts.web.security import is_api, principal, security_headers
from app.core.refusals import Refused
from app.web.api_errors import STATUS_CODES, error_response, refused, status_of
from app.web.templating import templates

log = logging.getLogger(__name__)

TITLES = {
    400: "This request is not understood",
    401: "Sign in first",
    403: "Not allowed",
    404: "Not found",
    405: "Not here",
    408: "Too slow",
    409: "Not now",
    413: "Too large",
    415: "Not a file the portal takes",
    422: "Something in the request is wrong",
    429: "Too many attempts",
    500: "The portal failed",
    503: "Try again in a while",
}


def wants_json(request: Request) -> bool:
    path = request.url.path
    if is_api(path) or path == "/openapi.json":
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def nearest_page(request: Request) -> str:
    """The closest address above this one that a browser can GET."""
    parts = request.url.path.rstrip("/").split("/")
    while len(parts) > 1:
        parts.pop()
        path = "/".join(parts) or "/"
        scope = {"type": "http", "path": path, "method": "GET", "root_path": ""}
        for route in request.app.router.routes:
            match, _ = route.matches(scope)
            if match == Match.FULL:
                return path
    return "/"


def error_page(request: Request, status: int, message: str) -> Response:
    if getattr(request.state, "principal", False) is False:
        # No page route ran (an unknown address): the header still shows who is signed in.
        with request.app.state.db.session() as session:
            try:
                principal(request, session)
            except HTTPException:
                request.state.principal = None
    title = TITLES.get(status) or HTTPStatus(status).phrase
    return templates.TemplateResponse(
        request,
        "error.html",
        {"status": status, "title": title, "message": message},
        status_code=status,
    )


def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
    no_route = exc.status_code == 404 and message == "Not Found"  # the router's own 404
    if wants_json(request):
        if no_route:
            message = f"nothing at {request.url.path}"
        code = getattr(exc, "code", None) or STATUS_CODES.get(
            exc.status_code, f"http-{exc.status_code}"
        )
        return error_response(code, message, exc.status_code, headers=exc.headers)
    if exc.status_code == 405 and request.method in ("GET", "HEAD"):
        return RedirectResponse(nearest_page(request), status_code=303)
    if no_route:
        message = f"There is no page at {request.url.path}."
    response = error_page(request, exc.status_code, message)
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


def refusal_error(request: Request, exc: Exception) -> Response:
    """A refusal no route turned into its own answer (nothing was committed)."""
    assert isinstance(exc, Refused)
    if wants_json(request):
        return refused(exc)
    return error_page(request, status_of(exc), exc.message)


def validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    problems = [
        {"field": ".".join(str(p) for p in e["loc"][1:]) or "the request", "message": e["msg"]}
        for e in exc.errors()
    ]
    text = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
    if wants_json(request):
        return error_response("invalid-request", text, 422, problems=problems)
    return error_page(request, 422, text)


def server_error(request: Request, exc: Exception) -> Response:
    """The last resort: answered outside the other middleware, so it sets the security
    headers itself."""
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    if wants_json(request):
        answer = error_response("internal", "the portal failed; the error is logged", 500)
        return security_headers(request, answer)
    page = error_page(request, 500, "Something failed on our side; the error is logged.")
    return security_headers(request, page)
