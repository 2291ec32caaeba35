"""The web server as the portal runs it: uvicorn with timeouts that a slow or idle client
cannot stretch.

uvicorn closes an idle keep-alive connection (``timeout_keep_alive``) but waits for a
request's headers for ever, so a client that opens connections and sends a byte now and
then holds them all (slowloris). :class:`GuardedH11Protocol` gives every request this
long to finish its headers, on a new connection and between the requests of a kept-alive
one; past it, the connection is closed. Request bodies are bounded by size in the app
(``app.web.limits``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.settings import Settings, get_settings


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
        self._header_deadline = self.loop.call_later(self._header_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _too_slow(self) -> None:
        self._header_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

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


def server_options(settings: Settings) -> dict[str, Any]:
    """What uvicorn is given, whatever starts it (``serve``, ``web``)."""
    return {
        "http": GuardedH11Protocol,
        "timeout_keep_alive": max(1, round(settings.idle_timeout_s)),
        # The largest request line and headers h11 buffers before refusing them.
        "h11_max_incomplete_event_size": 16 * 1024,
        "server_header": False,
    }


def run(app: Any, host: str, port: int, workers: int = 1) -> None:
    """Serve *app* (an ASGI app, or an import string when *workers* > 1)."""
    settings = get_settings()
    uvicorn.run(
        app, host=host, port=port, workers=workers, log_level="info", **server_options(settings)
    )
