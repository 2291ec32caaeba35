"""The access log keeps requests, never their secrets (issue 44): an invitation's link
and a signed URL's signature are replaced in every line the real server logs."""

from __future__ import annotations

import logging

import httpx
import pytest

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from app.web.server import redacted
from tests.support.fakes import RecordingQueue
from tests.support.http import served


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("/join/S3cr3tLinkToken", "/join/…"),
        ("/join/S3cr3t?next=/upload", "/join/…?next=/upload"),
        ("/uploads/abc?expires=17&signature=deadbeef", "/uploads/abc?expires=17&signature=…"),
        ("/x?X-Amz-Signature=abc&X-Amz-Credential=A/26&a=1",
         "/x?X-Amz-Signature=…&X-Amz-Credential=…&a=1"),
        ("/results?benchmark=llama3_1-8b", "/results?benchmark=llama3_1-8b"),
    ],
)  # fmt: skip
def test_secrets_in_a_request_line_are_replaced(path: str, kept: str) -> None:
    assert redacted(path) == kept


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_the_running_server_logs_an_invitation_visit_without_its_secret(
    settings: Settings, database: Database
) -> None:
    lines = Lines()
    with served(create_app(settings, queue=RecordingQueue()), settings) as url:
        access = logging.getLogger("uvicorn.access")
        access.setLevel(logging.INFO)
        access.addHandler(lines)
        try:
            httpx.get(f"{url}/join/TheInvitationSecret123", timeout=30)
            httpx.get(f"{url}/healthz?signature=TopSecret", timeout=30)
        finally:
            access.removeHandler(lines)
    logged = "\n".join(lines.lines)
    assert "/join/…" in logged and "/healthz?signature=…" in logged
    assert "TheInvitationSecret123" not in logged and "TopSecret" not in logged
