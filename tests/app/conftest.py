"""Fixtures of the portal's own tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import bearer, create_accounts
from tests.support.fakes import RecordingQueue


@pytest.fixture
def client(settings: Settings, database: Database, queue: RecordingQueue) -> Iterator[TestClient]:
    """Signed in as a submitter of Acme Corp, the organisation the test bundles name."""
    token = create_accounts(database)["submitter"]
    with TestClient(create_app(settings, queue=queue), headers=bearer(token)) as c:
        yield c
