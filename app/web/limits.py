"""Bounded request bodies: every request's body is limited by the class of its route,
counted while it streams, before any route, dependency or authentication reads it.

A declared ``Content-Length`` over the limit is refused at the first read; a chunked or
undeclared body is cut off at the byte that passes it. Either way the answer is 413 with
the portal's one error body (or the error page), and nothing beyond the limit is read
into memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.numbers import whole_number
from app.settings import Settings

# Multipart framing around the archive (boundaries, part headers, the form's fields).
FRAMING_ALLOWANCE = 64 * 1024

_UPLOADS = {("POST", "/api/v1/submissions"), ("POST", "/upload")}
_EVENTS = re.compile(r"/api/v1/submissions/[^/]+/points/[^/]+/[^/]+/[^/]+/events")


def body_limit(settings: Settings) -> Callable[[str, str], tuple[int, str]]:
    """The limit for a request (method, path) and what it is named in the refusal."""

    def limit(method: str, path: str) -> tuple[int, str]:
        if (method, path) in _UPLOADS:
            return settings.max_upload_bytes + FRAMING_ALLOWANCE, "upload"
        if method == "PUT" and _EVENTS.fullmatch(path):
            return settings.max_events_bytes, "events file"
        return settings.max_request_bytes, "request body"

    return limit


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int, what: str) -> None:
        super().__init__(413, detail=f"the {what} is larger than the limit of {limit} bytes")
        self.code = "upload-too-large" if what == "upload" else "too-large"


class BodyLimit:
    """ASGI middleware applying :func:`body_limit` to every HTTP request."""

    def __init__(self, app: ASGIApp, limit: Callable[[str, str], tuple[int, str]]) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, what = self.limit(scope["method"], scope["path"])
        declared = _content_length(scope)
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            if declared is not None and declared > limit:
                raise BodyTooLarge(limit, what)
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit, what)
            return message

        await self.app(scope, bounded, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return whole_number(value.decode("latin-1"))
    return None
