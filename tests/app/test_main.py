"""The web app as a server process starts it: ready before its first request."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.results.services import results
from app.settings import Settings
from tests.support.fakes import RecordingQueue


@pytest.fixture(autouse=True)
def _collector_as_it_was() -> Iterator[None]:
    """A server tunes the collector for its process: this test process gets it back."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_a_server_reads_the_public_record_before_its_first_request(
    demo_env: tuple[Settings, Database],
) -> None:
    settings, database = demo_env
    results._CACHE.clear()
    with TestClient(create_app(settings, queue=RecordingQueue(), serving=True)):
        url = str(database.engine.url)
        assert any(key[0] == url for key in results._CACHE), "the view was read at start-up"
    results._CACHE.clear()
    with TestClient(create_app(settings, queue=RecordingQueue())):  # an app a test makes
        assert results._CACHE == {}


def test_a_server_on_a_database_not_migrated_yet_starts_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(data_dir=tmp_path / "data", demo_data=False, redis_url=None)
    with caplog.at_level(logging.WARNING, logger="app.main"):
        with TestClient(create_app(settings, queue=RecordingQueue(), serving=True)) as client:
            assert client.get("/healthz").json() == {"status": "ok"}
    assert "the public record was not read at start-up" in caplog.text
