"""A lean HTTP/1.1 streaming client on asyncio protocols, for high request rates.

httpx costs about 1.6 ms of CPU per streamed request here; this client keeps one
keep-alive connection per slot, writes pre-encoded requests, de-chunks the body as it
arrives, decodes SSE events only until the first real chunk (that is when TTFT is
taken), and reads the rest of the text out of the raw events at the end, in C (a regex
over the bytes, one JSON string decode). Responses with reasoning or tool calls, and
anything it does not recognise, go through the full per-event decoder, so the
accumulation rules are exactly those of :mod:`harness.load.client`.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import orjson

from harness.load.client import Response, _Accumulator, _deltas, http_error

_dumps = orjson.dumps
_loads = orjson.loads

_CONTENT = re.compile(rb'"content"\s*:\s*"((?:[^"\\]|\\.)*)"')
_FINISH = re.compile(rb'"finish_reason"\s*:\s*"([a-z_]+)"')
_USAGE = re.compile(rb'"usage"\s*:\s*\{[^{}]*?"completion_tokens"\s*:\s*(\d+)')
_NEEDS_FULL_PARSE = (b'"reasoning', b'"tool_calls"', b'"text"')


class _Exchange:
    """One request/response on a connection."""

    def __init__(self, streaming: bool, on_first: Callable[[int], None] | None) -> None:
        self.streaming = streaming
        self.on_first = on_first
        self.response = Response(issued_ns=time.monotonic_ns())
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.head_done = False
        self.status = 0
        self.chunked = False
        self.length: int | None = None
        self.keep_alive = True
        self.raw = bytearray()  # undecoded bytes (head, or chunked framing)
        self.body = bytearray()  # de-chunked body
        self.scanned = 0  # how far the SSE scan for the first chunk has read into body
        self.acc = _Accumulator()
        self.first_at = 0  # body offset after the first real chunk's event


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.exchange: _Exchange | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        ex = self.exchange
        if ex is not None and not ex.done.done():
            ex.response.error = ("ConnectionLost", f"the server closed the connection: {exc}")
            ex.done.set_result(None)

    def data_received(self, data: bytes) -> None:
        ex = self.exchange
        if ex is None:
            return
        try:
            self._feed(ex, data)
        except (ValueError, KeyError) as exc:
            # The message may quote the server's bytes: only what kind of fault it was.
            ex.response.error = ("ProtocolError", f"malformed response ({type(exc).__name__})")
            ex.keep_alive = False
            if not ex.done.done():
                ex.done.set_result(None)

    def _feed(self, ex: _Exchange, data: bytes) -> None:
        ex.raw += data
        if not ex.head_done:
            end = ex.raw.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(ex.raw[:end]).decode("latin-1").split("\r\n")
            ex.status = int(head[0].split(" ", 2)[1])
            for line in head[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                if name == "transfer-encoding" and "chunked" in value.lower():
                    ex.chunked = True
                elif name == "content-length":
                    ex.length = int(value.strip())
                elif name == "connection" and value.strip().lower() == "close":
                    ex.keep_alive = False
            del ex.raw[: end + 4]
            ex.head_done = True
        finished = self._dechunk(ex) if ex.chunked else self._plain(ex)
        if ex.streaming and ex.status < 400 and not ex.acc.first_seen:
            self._scan_for_first(ex)
        if finished and not ex.done.done():
            ex.done.set_result(None)

    @staticmethod
    def _plain(ex: _Exchange) -> bool:
        ex.body += ex.raw
        ex.raw.clear()
        return ex.length is not None and len(ex.body) >= ex.length

    @staticmethod
    def _dechunk(ex: _Exchange) -> bool:
        # A streamed response is a hundred or more small chunks: the loop avoids a copy
        # per chunk (views, joined once) and parses a size line only once.
        raw = ex.raw
        find = raw.find
        total = len(raw)
        pos = 0
        finished = False
        view = memoryview(raw)
        pieces = []
        try:
            while True:
                line_end = find(b"\r\n", pos)
                if line_end < 0:
                    break
                line = raw[pos:line_end]
                try:
                    size = int(line, 16)
                except ValueError:  # a chunk extension (";name=value"), seldom sent
                    size = int(line.split(b";", 1)[0], 16)
                start = line_end + 2
                if size == 0:
                    if find(b"\r\n", start) >= 0:
                        finished = True  # else the trailer is not complete yet
                    break
                if total < start + size + 2:
                    break
                pieces.append(view[start : start + size])
                pos = start + size + 2
            if pieces:
                ex.body += b"".join(pieces)
        finally:
            pieces.clear()
            view.release()
        if finished:
            del raw[:]
        else:
            del raw[:pos]
        return finished

    @staticmethod
    def _scan_for_first(ex: _Exchange) -> None:
        while True:
            end = ex.body.find(b"\n\n", ex.scanned)
            if end < 0:
                return
            frame = bytes(ex.body[ex.scanned : end])
            ex.scanned = end + 2
            for delta in _deltas(frame.replace(b"\r", b"")):
                finish = delta.pop("_finish", None)
                if finish:
                    ex.acc.finish_reason = finish
                if ex.acc.feed(delta):
                    ex.response.recv_first_ns = time.monotonic_ns()
                    ex.first_at = ex.scanned
                    if ex.on_first is not None:
                        ex.on_first(ex.response.recv_first_ns)
                    return


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # all controls but HTAB


def header_lines(headers: dict[str, str] | None) -> str:
    """Header lines as sent; a name that is not a token or a value with CR, LF or another
    control character would end the line and add a header (or a request) of its own, so
    it is refused rather than sent."""
    lines = []
    for name, value in (headers or {}).items():
        if not _TOKEN.fullmatch(name):
            raise ValueError(f"header name {name!r} is not an HTTP token")
        if _UNSAFE.search(value) or not value.isascii():
            raise ValueError(f"the value of header {name} has a control or non-ASCII character")
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines)


def _request_target(path: str) -> str:
    if _UNSAFE.search(path) or " " in path or "\t" in path or not path.isascii():
        raise ValueError("the endpoint path has spaces, control or non-ASCII characters")
    return path


class FastClient:
    """A pool of keep-alive connections to one endpoint."""

    def __init__(
        self, base_url: str, *, headers: dict[str, str] | None = None, timeout_s: float = 600.0
    ) -> None:
        parsed = urlparse(base_url)
        if parsed.scheme != "http":
            raise ValueError("the fast client speaks plain http only; use --client httpx for https")
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or 80
        self.base_path = _request_target(parsed.path.rstrip("/"))
        self.timeout_s = timeout_s
        extra = header_lines(headers)
        self._head = (
            f"Host: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
            f"Accept: text/event-stream\r\n{extra}"
        ).encode()
        self._idle: list[_Connection] = []

    async def _connection(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(_Connection, self.host, self.port)
        return conn

    async def send(
        self,
        path: str,
        body: dict[str, Any],
        *,
        streaming: bool,
        on_first: Callable[[int], None] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        payload = _dumps(body)
        extra = header_lines(headers).encode()
        ex = _Exchange(streaming, on_first)
        try:
            conn = await self._connection()
        except OSError as exc:
            ex.response.error = (type(exc).__name__, str(exc) or type(exc).__name__)
            ex.response.complete_ns = time.monotonic_ns()
            return ex.response
        conn.exchange = ex
        assert conn.transport is not None
        ex.response.issued_ns = time.monotonic_ns()
        conn.transport.write(
            b"POST "
            + (self.base_path + path).encode()
            + b" HTTP/1.1\r\n"
            + self._head
            + extra
            + b"Content-Length: "
            + str(len(payload)).encode()
            + b"\r\n\r\n"
            + payload
        )
        try:
            await asyncio.wait_for(ex.done, self.timeout_s)
        except TimeoutError:
            ex.response.error = ("Timeout", f"no complete response in {self.timeout_s:g} s")
            ex.keep_alive = False
        ex.response.complete_ns = time.monotonic_ns()
        conn.exchange = None
        if ex.keep_alive and not conn.closed and ex.response.error is None:
            self._idle.append(conn)
        elif conn.transport is not None:
            conn.transport.close()
        if ex.response.error is None:
            self._finish(ex)
        return ex.response

    @staticmethod
    def _finish(ex: _Exchange) -> None:
        response = ex.response
        if ex.status >= 400:
            response.error = http_error(ex.status, len(ex.body))
            return
        acc = ex.acc
        if not ex.streaming:
            acc.take_message(_loads(bytes(ex.body)))
        else:
            rest = bytes(ex.body[ex.scanned :])
            if not acc.first_seen or any(marker in rest for marker in _NEEDS_FULL_PARSE):
                for frame in rest.replace(b"\r", b"").split(b"\n\n"):
                    for delta in _deltas(frame):
                        finish = delta.pop("_finish", None)
                        if finish:
                            acc.finish_reason = finish
                        delta.pop("_usage", None)  # read below, on either path
                        if acc.feed(delta) and response.recv_first_ns is None:
                            response.recv_first_ns = response.complete_ns
            else:
                # Plain content deltas: the text is the concatenation of their strings.
                pieces = _CONTENT.findall(rest)
                if pieces:
                    acc.content.append(_loads(b'"' + b"".join(pieces) + b'"'))
                finish = _FINISH.findall(rest)
                if finish:
                    acc.finish_reason = finish[-1].decode()
            if usage := _USAGE.findall(rest):
                acc.usage_tokens = int(usage[-1])
        if ex.streaming and not acc.first_seen:
            response.error = ("EmptyResponse", "the stream ended without a content chunk")
            return
        response.output = acc.output(ex.streaming)
        response.finish_reason = acc.finish_reason
        response.usage_tokens = acc.usage_tokens

    async def aclose(self) -> None:
        for conn in self._idle:
            if conn.transport is not None:
                conn.transport.close()
        self._idle.clear()
