"""A mail server on loopback for the accounts' e-mail (invitations, the inbox)."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator

import pytest


class _SmtpSink(socketserver.StreamRequestHandler):
    """Just enough SMTP to take messages: every DATA block lands in server.messages."""

    def reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self) -> None:
        self.reply("220 sink ready")
        while line := self.rfile.readline():
            verb = line.decode().strip().split(" ")[0].upper()
            if verb in ("EHLO", "HELO"):
                self.reply("250 sink")
            elif verb == "DATA":
                self.reply("354 go on")
                body = []
                while (row := self.rfile.readline()) not in (b".\r\n", b""):
                    body.append(row.decode())
                self.server.messages.append("".join(body))  # type: ignore[attr-defined]
                self.reply("250 queued")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("250 ok")


@pytest.fixture
def smtp() -> Iterator[tuple[int, list[str]]]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SmtpSink)
    server.messages = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], server.messages  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()
