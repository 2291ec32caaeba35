"""A download answered from its open file: removing the file once the answer has it
(a newer cached state replaced it) changes nothing the client receives."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.web.files import CHUNK, open_file_response


def test_a_file_removed_once_opened_is_sent_whole(tmp_path: Path) -> None:
    path = tmp_path / "endpoints-2026-12-C1@7.tar.gz"
    body = bytes(range(256)) * (3 * CHUNK // 256 + 17)  # several chunks and a part
    path.write_bytes(body)
    app = FastAPI()

    @app.get("/dataset")
    def dataset() -> object:
        file = path.open("rb")
        path.unlink()  # as the next state's build does, before a byte is sent
        return open_file_response(file, "application/gzip", "endpoints-2026-12-C1.tar.gz")

    answer = TestClient(app).get("/dataset")
    assert answer.status_code == 200 and answer.content == body
    assert answer.headers["content-length"] == str(len(body))
    assert answer.headers["content-type"] == "application/gzip"
    assert answer.headers["content-disposition"] == (
        'attachment; filename="endpoints-2026-12-C1.tar.gz"'
    )
