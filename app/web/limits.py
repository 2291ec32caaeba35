"""Bounded request bodies: every request's body is limited by the class of its route,
counted while it streams, before any route, dependency or authentication reads it.

A declared ``Content-Length`` over the limit is refused at the first read; a chunked or
undeclared body is cut off at the byte that passes it. Either way the answer is 413 with
the portal's one error body (or the error page), and nothing beyond the limit is read
into memory.

A body must also keep coming: after a grace period it must have arrived at a minimum
average rate (``ENDPOINTS_PORTAL_MIN_BODY_BYTES_PER_S``), or the request is answered 408
and its connection closed. The rate is an average since the request began, not a
deadline for the whole body: a large upload on a slow but steady link goes through; a
client trickling a byte every two seconds holds nothing for long.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.numbers import whole_number
from app.settings import Settings

# Multipart framing around the archive (boundaries, part headers, the form's fields).
FRAMING_ALLOWANCE = 64 * 1024

_UPLOADS = {("POST", "/api/v1/submissions"), ("POST", "/upload")}
# A corrected bundle (rules §11.7), through the API or the submission page's form.
_CORRECTIONS = re.compile(r"(/api/v1)?/submissions/[^/]+/corrections")
_EVENTS = re.compile(r"/api/v1/submissions/[^/]+/points/[^/]+/[^/]+/[^/]+/events")
# The official CLI's PUT to a signed URL: the archive alone, no form around it.
_SIGNED_UPLOAD = re.compile(r"/submission-api/uploads/[^/]+")


def body_pace(settings: Settings) -> BodyPace:
    return BodyPace(settings.min_body_bytes_per_s, settings.body_grace_s)


def body_limit(settings: Settings) -> Callable[[str, str], tuple[int, str]]:
    """The limit for a request (method, path) and what it is named in the refusal."""

    def limit(method: str, path: str) -> tuple[int, str]:
        if (method, path) in _UPLOADS or (method == "POST" and _CORRECTIONS.fullmatch(path)):
            return settings.max_upload_bytes + FRAMING_ALLOWANCE, "upload"
        if method == "PUT" and _EVENTS.fullmatch(path):
            return settings.max_events_bytes, "events file"
        if method == "PUT" and _SIGNED_UPLOAD.fullmatch(path):
            return settings.max_upload_bytes, "upload"
        return settings.max_request_bytes, "request body"

    return limit


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int, what: str) -> None:
        super().__init__(413, detail=f"the {what} is larger than the limit of {limit} bytes")
        self.code = "upload-too-large" if what == "upload" else "too-large"


class BodyTooSlow(HTTPException):
    def __init__(self, rate: float) -> None:
        super().__init__(
            408,
            detail=f"the request's body arrived slower than {rate:g} bytes a second; send it "
            "again on a steadier link",
            headers={"Connection": "close"},
        )
        self.code = "body-too-slow"


@dataclass(frozen=True)
class BodyPace:
    """How fast a body must keep coming: *grace_s* for nothing at all, then on average at
    least *bytes_per_s* since the request began."""

    bytes_per_s: float
    grace_s: float

    def wait_s(self, started: float, received: int, now: float) -> float:
        """How long the next piece may take before the body is too slow."""
        return started + self.grace_s + received / self.bytes_per_s - now


class BodyLimit:
    """ASGI middleware applying :func:`body_limit` (and the pace, where given) to every
    HTTP request's body."""

    def __init__(
        self,
        app: ASGIApp,
        limit: Callable[[str, str], tuple[int, str]],
        pace: BodyPace | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.pace = pace

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, what = self.limit(scope["method"], scope["path"])
        declared = _content_length(scope)
        loop = asyncio.get_running_loop()
        started = loop.time()
        seen = 0
        complete = False

        async def next_piece() -> Message:
            if complete or self.pace is None:
                # After the body the app only listens for a disconnect, as long as it likes.
                return await receive()
            wait = self.pace.wait_s(started, seen, loop.time())
            try:
                return await asyncio.wait_for(receive(), timeout=max(wait, 0.0))
            except TimeoutError:
                raise BodyTooSlow(self.pace.bytes_per_s) from None

        async def bounded() -> Message:
            nonlocal seen, complete
            if declared is not None and declared > limit:
                raise BodyTooLarge(limit, what)
            message = await next_piece()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                complete = complete or not message.get("more_body", False)
                if seen > limit:
                    raise BodyTooLarge(limit, what)
            return message

        await self.app(scope, bounded, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return whole_number(value.decode("latin-1"))
    return None
