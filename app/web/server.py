"""The web server as the portal runs it: uvicorn with timeouts that a slow or idle client
cannot stretch.

uvicorn closes an idle keep-alive connection (``timeout_keep_alive``) but waits for a
request's headers for ever, so a client that opens connections and sends a byte now and
then holds them all (slowloris). :class:`GuardedH11Protocol` gives every request this
long to finish its headers, on a new connection and between the requests of a kept-alive
one; past it, the connection is closed. Request bodies are bounded by size in the app
(``app.web.limits``).

Both deadlines are timers: a request that arrives after the loop last read its sockets and
before a deadline's timer runs (a moment that a busy machine stretches) is not read yet
when the timer decides, and closing then would drop it unanswered ("server
disconnected"). A connection with bytes waiting in the kernel is therefore never given up
as idle or slow.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
import socket
from typing import Any
from urllib.parse import unquote_plus

import h11
import uvicorn
from uvicorn.config import LOGGING_CONFIG
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.settings import Settings, get_settings

# How long a connection whose request arrived past its deadline has to be read.
_GRACE_S = 0.5


def request_waiting(transport: asyncio.BaseTransport) -> bool:
    """Whether bytes from the client wait in the kernel, not yet read by the loop."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    try:
        # A duplicate of the descriptor: the transport's own socket object (uvloop's) can
        # not be read from.
        with socket.fromfd(sock.fileno(), sock.family, sock.type) as peek:
            return bool(peek.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except OSError:  # nothing waiting (EAGAIN), or the connection is gone
        return False


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline for each request's headers
    (``ENDPOINTS_PORTAL_HEADER_TIMEOUT_S``; read here, as every worker process starts)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_deadline: asyncio.TimerHandle | None = None
        self._header_timeout_s = get_settings().header_timeout_s
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._graced = False
        self._header_deadline = self.loop.call_later(self._header_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _too_slow(self) -> None:
        self._header_deadline = None
        if self.conn.their_state is not h11.IDLE or self.transport.is_closing():
            return
        if not self._graced and request_waiting(self.transport):
            # The bytes arrived before the deadline's timer ran and are read next. Once per
            # deadline, so a trickle gains nothing.
            self._graced = True
            self._header_deadline = self.loop.call_later(_GRACE_S, self._too_slow)
            return
        self.transport.close()

    def timeout_keep_alive_handler(self) -> None:
        """uvicorn closes a kept-alive connection idle past ``timeout_keep_alive``; one
        whose next request already arrived (not yet read when the timer runs) is not
        idle, and closing it would drop that request unanswered."""
        if request_waiting(self.transport):
            self.timeout_keep_alive_task = None
            return
        super().timeout_keep_alive_handler()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the request line and headers are in
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection has the same time

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


# Secrets that travel in a request line: an invitation's link, and the signature of a
# signed URL. The access log keeps the request, never them.
_SECRET_PATHS = re.compile(r"^(/join/)[^/?]+")
SECRET_PARAMS = frozenset(
    {"signature", "sig", "token", "x-amz-signature", "x-amz-credential", "x-amz-security-token"}
)
REDACTED = "…"


def redacted(path: str) -> str:
    """*path* (with its query) with every secret in it replaced."""
    path, mark, query = path.partition("?")
    path = _SECRET_PATHS.sub(rf"\g<1>{REDACTED}", path)
    pairs = []
    for pair in query.split("&") if query else []:
        name, equals, _value = pair.partition("=")
        secret = equals and unquote_plus(name).lower() in SECRET_PARAMS
        pairs.append(f"{name}={REDACTED}" if secret else pair)
    return path + mark + "&".join(pairs)


class RedactSecrets(logging.Filter):
    """uvicorn's access-log records, with the secrets of their request lines replaced."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            record.args = (args[0], args[1], redacted(args[2]), args[3], args[4])
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's logging, with the access log's secrets redacted."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {"redact": {"()": RedactSecrets}}
    config["loggers"]["uvicorn.access"]["filters"] = ["redact"]
    return config


def server_options(settings: Settings) -> dict[str, Any]:
    """What uvicorn is given, whatever starts it (``serve``, ``web``)."""
    return {
        "http": GuardedH11Protocol,
        "timeout_keep_alive": max(1, round(settings.idle_timeout_s)),
        # The largest request line and headers h11 buffers before refusing them.
        "h11_max_incomplete_event_size": 16 * 1024,
        "server_header": False,
        "log_config": log_config(),
    }


def run(app: Any, host: str, port: int, workers: int = 1, fd: int | None = None) -> None:
    """Serve *app* (an ASGI app, or an import string when *workers* > 1); with *fd*, on
    that already bound and listening socket instead of *host* and *port*."""
    settings = get_settings()
    where: dict[str, Any] = {"fd": fd} if fd is not None else {"host": host, "port": port}
    uvicorn.run(app, workers=workers, log_level="info", **where, **server_options(settings))
