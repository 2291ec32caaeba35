"""The web server's connection deadlines decide on what the kernel holds: a connection
whose next request has arrived, but is not read yet when a deadline's timer runs, is
neither idle nor slow; one with nothing waiting is closed (issue 47: "server disconnected
without sending a response" under a loaded suite)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
import uvloop
from uvicorn.server import ServerState

from app.settings import Settings
from app.web.server import GuardedH11Protocol, request_waiting, server_options

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "uvloop": uvloop.new_event_loop,  # what the portal runs on
    "asyncio": asyncio.new_event_loop,
}


async def _app(scope: object, receive: object, send: object) -> None:
    raise AssertionError("no request is read in these tests")


@contextmanager
def _connection(
    settings: Settings, loop_kind: str
) -> Iterator[tuple[GuardedH11Protocol, socket.socket, asyncio.AbstractEventLoop]]:
    """The server's protocol on one end of a real connection, on a loop that is not
    running (as while it is busy): what the client sends stays in the kernel."""
    config = uvicorn.Config(_app, **server_options(settings))
    config.load()
    loop = LOOPS[loop_kind]()
    protocol = GuardedH11Protocol(config, ServerState(), app_state={}, _loop=loop)
    server_end, client_end = socket.socketpair()
    try:
        loop.run_until_complete(loop.connect_accepted_socket(lambda: protocol, server_end))
        yield protocol, client_end, loop
    finally:
        client_end.close()
        if not protocol.transport.is_closing():
            protocol.transport.close()
        loop.run_until_complete(asyncio.sleep(0))
        loop.close()


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    quick = Settings(data_dir=tmp_path, header_timeout_s=0.5, idle_timeout_s=1.0)
    # The protocol reads its header deadline as each connection starts.
    monkeypatch.setattr("app.web.server.get_settings", lambda: quick)
    return quick


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_a_request_waiting_in_the_kernel_is_seen(settings: Settings, loop_kind: str) -> None:
    with _connection(settings, loop_kind) as (protocol, client, _):
        assert not request_waiting(protocol.transport)
        client.sendall(b"GET / HTTP/1.1\r\n")
        assert request_waiting(protocol.transport)


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_the_header_deadline_spares_a_request_that_arrived(
    settings: Settings, loop_kind: str
) -> None:
    with _connection(settings, loop_kind) as (protocol, client, loop):
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        protocol._too_slow()  # the deadline's timer, run before the loop reads
        assert not protocol.transport.is_closing()
        # Once per deadline: a request still unfinished after its grace is cut off.
        loop.run_until_complete(asyncio.sleep(0.7))  # read; the grace runs out
        assert protocol.transport.is_closing()


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_the_keep_alive_deadline_spares_a_request_that_arrived(
    settings: Settings, loop_kind: str
) -> None:
    with _connection(settings, loop_kind) as (protocol, client, _):
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        protocol.timeout_keep_alive_handler()
        assert not protocol.transport.is_closing()


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_an_idle_connection_is_closed_at_either_deadline(
    settings: Settings, loop_kind: str
) -> None:
    with _connection(settings, loop_kind) as (protocol, _, _):
        protocol._too_slow()
        assert protocol.transport.is_closing()
    with _connection(settings, loop_kind) as (protocol, _, _):
        protocol.timeout_keep_alive_handler()
        assert protocol.transport.is_closing()
