"""Bounded requests on the real server: a 1 GiB body, declared or chunked, costs the web
process no memory; a client that never finishes its headers is cut off; a body over its
route's limit is a 413 with the one error body, before anything else reads it."""

from __future__ import annotations

import json
import select
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import bearer, create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.http import served
from tests.support.portal import RunningPortal

GIB = 1024**3
PIECE = b"[" + b"0," * (256 * 1024 - 1) + b"0]"  # 512 KiB of JSON-looking bytes


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _send_gib(url: str, path: str, chunked: bool) -> bytes:
    """Send a 1 GiB body (or as much of it as the server reads) and return the answer."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {GIB}"
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Content-Type: application/json\r\n{framing}\r\n\r\n".encode()
        )
        sock.settimeout(2)
        sent = 0
        frame = (b"%x\r\n" % len(PIECE) + PIECE + b"\r\n") if chunked else PIECE
        while sent < GIB:
            if select.select([sock], [], [], 0)[0]:
                break  # the server has answered
            try:
                sock.sendall(frame)
            except (TimeoutError, BrokenPipeError, ConnectionResetError):
                break  # it stopped reading
            sent += len(PIECE)
        sock.settimeout(10)
        answer = b""
        while b"\r\n\r\n" not in answer:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            answer += data
        assert sent < GIB // 4, f"the server read {sent} bytes of a body over its limit"
        return answer


@pytest.mark.slow
def test_a_gib_body_leaves_the_web_process_memory_flat(portal: RunningPortal) -> None:
    pid = portal.process.pid
    path = "/api/v1/submissions/anything/decisions"  # unauthenticated: no body is needed
    for _ in range(2):  # warm: the first answers load what a process loads once
        _send_gib(portal.url, path, chunked=False)
    before = _rss_bytes(pid)
    for chunked in (False, True, False, True):
        answer = _send_gib(portal.url, path, chunked)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    grown = _rss_bytes(pid) - before
    assert grown < 64 * 1024**2, f"the web process grew by {grown / 1024**2:.0f} MiB"


@pytest.mark.slow
def test_a_client_that_never_finishes_its_headers_is_cut_off(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick = settings.model_copy(update={"header_timeout_s": 1.0})
    # The server's protocol reads its header deadline as each connection starts.
    monkeypatch.setattr("app.web.server.get_settings", lambda: quick)
    with served(create_app(quick, queue=RecordingQueue()), quick) as url:
        parts = urlsplit(url)
        slow = []
        for _ in range(50):
            sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # and nothing more
            slow.append(sock)
        try:
            for sock in slow:  # each is closed a second after it opened, without an answer
                assert sock.recv(1024) == b"", "a half-sent request's connection stayed open"
            # The server still answers everyone else.
            with socket.create_connection((parts.hostname, parts.port), timeout=30) as ok:
                ok.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                assert ok.recv(1024).startswith(b"HTTP/1.1 200")
        finally:
            for sock in slow:
                sock.close()


def test_each_route_class_has_its_limit_and_the_one_error_body(
    settings: Settings, database: Database
) -> None:
    small = settings.model_copy(update={"max_request_bytes": 1000, "max_upload_bytes": 4000})
    token = create_accounts(database)["submitter"]
    with TestClient(create_app(small, queue=RecordingQueue()), headers=bearer(token)) as client:
        big = json.dumps({"reason": "x" * 2000})
        for headers in ({"Content-Type": "application/json"}, {"Transfer-Encoding": "chunked"}):
            refused = client.post("/api/v1/submissions/x/withdraw", content=big, headers=headers)
            assert refused.status_code == 413, refused.text
            assert refused.json()["error"] == {
                "code": "too-large",
                "message": "the request body is larger than the limit of 1000 bytes",
            }
        # An upload is held to the bundle limit, not the JSON one.
        upload = client.post("/api/v1/submissions", files={"file": ("a.tar.gz", b"x" * 3000)})
        assert upload.status_code == 415  # read whole (3 kB), then refused as no archive
        over = client.post("/api/v1/submissions", files={"file": ("a.tar.gz", b"x" * 80_000)})
        assert over.status_code == 413 and over.json()["error"]["code"] == "upload-too-large"
        # A form body over the limit is refused the same way, as a page.
        page = client.post("/login", data={"email": "a@b.c", "password": "p" * 5000})
        assert page.status_code == 413 and "larger than the limit" in page.text


def test_a_part_header_over_the_parser_limit_is_a_400(
    settings: Settings, database: Database
) -> None:
    token = create_accounts(database)["submitter"]
    with TestClient(create_app(settings, queue=RecordingQueue()), headers=bearer(token)) as client:
        body = (
            b'--XX\r\nContent-Disposition: form-data; name="file"; filename="a.tgz"\r\n'
            b"X-Long: " + b"a" * 5000 + b"\r\n\r\ndata\r\n--XX--\r\n"
        )
        answer = client.post(
            "/api/v1/submissions",
            content=body,
            headers={"Content-Type": "multipart/form-data; boundary=XX"},
        )
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad-multipart"


def _slow_settings(settings: Settings, rate: float, grace_s: float = 1.0) -> Settings:
    return settings.model_copy(update={"min_body_bytes_per_s": rate, "body_grace_s": grace_s})


def test_a_body_trickled_a_byte_at_a_time_is_answered_408_and_let_go(
    settings: Settings, database: Database
) -> None:
    """Issue 44: a POST trickling a byte every 2 s stayed open for ever. The pace is an
    average since the request began: a byte every half second is far below it."""
    slow = _slow_settings(settings, rate=100.0)
    tokens = create_accounts(database)
    with served(create_app(slow, queue=RecordingQueue()), slow) as url:
        parts = urlsplit(url)
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
            sock.sendall(
                f"POST /api/v1/submissions HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                f"Authorization: Bearer {tokens['submitter']}\r\n"
                "Content-Type: multipart/form-data; boundary=x\r\n"
                "Content-Length: 100000\r\n\r\n"
                '--x\r\nContent-Disposition: form-data; name="file"; filename="a.tar.gz"\r\n'
                "Content-Type: application/gzip\r\n\r\n".encode()
            )
            answer = b""
            for _ in range(120):  # a minute at most; the pace refuses it within seconds
                try:
                    sock.sendall(b"a")
                except (BrokenPipeError, ConnectionResetError):
                    break
                if select.select([sock], [], [], 0.5)[0]:
                    answer = sock.recv(65536)
                    break
            assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
            assert b"body-too-slow" in answer
            sock.settimeout(10)
            rest = b""
            while chunk := sock.recv(65536):  # the server closes the connection
                rest += chunk


def test_a_large_body_on_a_slow_but_steady_link_goes_through(
    settings: Settings, database: Database
) -> None:
    """Not a total deadline: 24 KiB sent in 1 KiB pieces, each a while after the last,
    keeps well above an average of 10 bytes a second, however long it takes. (The grace
    is long enough that a busy machine pausing this test between its pieces changes
    nothing: the pace, not the first second, is what is under test.)"""
    slow = _slow_settings(settings, rate=10.0, grace_s=15.0)
    tokens = create_accounts(database)
    body = json.dumps({"embargo_date": "2027-01-20", "padding": "x" * (24 * 1024)}).encode()
    with served(create_app(slow, queue=RecordingQueue()), slow) as url:
        parts = urlsplit(url)
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
            sock.sendall(
                f"PUT /api/v1/submissions/nope/embargo HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                f"Authorization: Bearer {tokens['submitter']}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            )
            for start in range(0, len(body), 1024):
                sock.sendall(body[start : start + 1024])
                time.sleep(0.1)
            answer = sock.recv(65536)
    # Read whole and answered by the route (no such submission), not cut off.
    assert answer.startswith(b"HTTP/1.1 404"), answer[:200]
