"""The browser id and the security headers: set on the response's start message alone, so
a streamed body reaches the client as the route produces it, whole."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from starlette.responses import HTMLResponse, StreamingResponse
from starlette.types import Message, Scope

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


async def _serve(
    app: object, scope: Scope, delivered: asyncio.Event | None = None
) -> tuple[dict[str, str], list[bytes], list[str]]:
    """The start message's headers and cookies and the body's chunks that *app* sends
    through the middleware; *delivered* is set when the first chunk reaches the client."""
    sent: list[Message] = []

    async def send(message: Message) -> None:
        if delivered is not None and message["type"] == "http.response.body":
            delivered.set()
        sent.append(message)

    middleware = BrowserIdAndHeaders(app)  # type: ignore[arg-type]
    await asyncio.wait_for(middleware(scope, _until_disconnect, send), 60)
    start = sent[0]
    assert start["type"] == "http.response.start"
    headers = {k.decode(): v.decode() for k, v in start["headers"] if k != b"set-cookie"}
    cookies = [v.decode() for k, v in start["headers"] if k == b"set-cookie"]
    chunks = [m["body"] for m in sent[1:] if m.get("body")]
    return headers, chunks, cookies


def test_a_streamed_download_passes_through_whole_and_as_it_is_produced() -> None:
    async def run() -> tuple[dict[str, str], list[bytes], list[str]]:
        delivered = asyncio.Event()

        async def chunks() -> AsyncIterator[bytes]:
            for index in range(CHUNKS):
                yield CHUNK
                if index == 0:
                    # The next chunk is made only once the first reached the client: a
                    # middleware that held the body back would never get here.
                    await delivered.wait()

        download = StreamingResponse(
            chunks(),
            media_type="application/zip",
            headers={"Content-Length": str(CHUNKS * len(CHUNK))},
        )
        return await _serve(download, _scope("/api/v1/cohorts/x/dataset"), delivered)

    headers, chunks, cookies = asyncio.run(run())
    assert chunks == [CHUNK] * CHUNKS
    assert headers["content-security-policy"] == PAGE_CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert cookies == []  # a download sets no browser id


def test_a_page_gives_a_new_browser_its_id_and_keeps_a_known_ones() -> None:
    page = HTMLResponse("<p>hello</p>")
    headers, chunks, cookies = asyncio.run(_serve(page, _scope("/login")))
    assert b"".join(chunks) == b"<p>hello</p>"
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
