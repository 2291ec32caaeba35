"""A webhook receiver on loopback: a real HTTP server that keeps what it is sent and
answers as a test tells it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    port: int
    answers: list[int] = field(default_factory=list)  # the statuses to answer, in turn
    received: list[Received] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    box = Receiver(url=f"http://127.0.0.1:{port}/hooks/in", port=port)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            box.received.append(Received(self.path, headers, body))
            status = box.answers.pop(0) if box.answers else 200
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server.RequestHandlerClass = Handler
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box
    finally:
        server.shutdown()
        server.server_close()
