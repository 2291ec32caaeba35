"""The browser id and the security headers: set on the response's start message alone, so
a streamed body reaches the client as the route produces it, whole."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from starlette.responses import HTMLResponse, StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from app.accounts.web.security import PAGE_CSP, BrowserIdAndHeaders

CHUNKS = 50
CHUNK = b"x" * 4096


def _scope(path: str, cookie: str | None = None) -> Scope:
    headers = [(b"host", b"portal.test")]
    if cookie is not None:
        headers.append((b"cookie", cookie.encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("portal.test", 80),
    }


async def _until_disconnect() -> Message:
    # As a server does: nothing more to receive until the client goes away.
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def _serve(app: object, scope: Scope) -> tuple[dict[str, str], bytes, list[str]]:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    middleware = BrowserIdAndHeaders(app)  # type: ignore[arg-type]
    await asyncio.wait_for(middleware(scope, _until_disconnect, send), 60)
    start = sent[0]
    assert start["type"] == "http.response.start"
    headers = {k.decode(): v.decode() for k, v in start["headers"] if k != b"set-cookie"}
    cookies = [v.decode() for k, v in start["headers"] if k == b"set-cookie"]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return headers, body, cookies


def test_a_streamed_download_passes_through_whole_and_as_it_is_produced() -> None:
    async def run() -> None:
        delivered = asyncio.Event()
        sent_chunks = 0

        async def chunks() -> AsyncIterator[bytes]:
            for index in range(CHUNKS):
                yield CHUNK
                if index == 0:
                    # The next chunk is made only once the first reached the client: a
                    # middleware that held the body back would never get here.
                    await delivered.wait()

        inner = StreamingResponse(
            chunks(),
            media_type="application/zip",
            headers={"Content-Length": str(CHUNKS * len(CHUNK))},
        )

        received: list[Message] = []

        async def send(message: Message) -> None:
            nonlocal sent_chunks
            if message["type"] == "http.response.body" and message.get("body"):
                sent_chunks += 1
                delivered.set()
            received.append(message)

        async def app(scope: Scope, receive: Receive, send_: Send) -> None:
            await inner(scope, receive, send_)

        await asyncio.wait_for(
            BrowserIdAndHeaders(app)(_scope("/api/v1/cohorts/x/dataset"), _until_disconnect, send),
            60,
        )
        body = b"".join(m.get("body", b"") for m in received[1:])
        assert len(body) == CHUNKS * len(CHUNK) and sent_chunks == CHUNKS
        start = dict(received[0]["headers"])
        assert start[b"content-security-policy"] == PAGE_CSP.encode()
        assert start[b"x-content-type-options"] == b"nosniff"
        assert b"set-cookie" not in start  # a download sets no browser id

    asyncio.run(run())


def test_a_page_gives_a_new_browser_its_id_and_keeps_a_known_ones() -> None:
    page = HTMLResponse("<p>hello</p>")
    headers, body, cookies = asyncio.run(_serve(page, _scope("/login")))
    assert body == b"<p>hello</p>"
    assert len(cookies) == 1 and cookies[0].startswith("epp_browser=")
    assert "httponly" in cookies[0].lower() and "samesite=lax" in cookies[0].lower()
    # A response that sets a cookie is its browser's alone.
    assert headers["cache-control"] == "private, no-store"
    _, _, again = asyncio.run(_serve(page, _scope("/login", cookie="epp_browser=known")))
    assert again == []


def test_an_embedded_chart_sets_no_cookie_and_may_be_framed() -> None:
    chart = HTMLResponse("<svg></svg>")
    headers, _, cookies = asyncio.run(_serve(chart, _scope("/embed/results")))
    assert cookies == []
    assert "frame-ancestors *" in headers["content-security-policy"]
    assert "cache-control" not in headers
