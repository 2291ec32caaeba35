"""The buyer's views, read from one demo portal per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.fakes import RecordingQueue


@pytest.fixture(scope="module")
def client(demo_env: tuple[Settings, Database]) -> Iterator[TestClient]:
    """An anonymous visitor's client on the shared demo (a module that needs a fresh
    client per test, with no cookie yet, defines its own)."""
    settings, _database = demo_env
    with TestClient(create_app(settings, queue=RecordingQueue())) as c:
        yield c


@pytest.fixture
def demo_portal(
    fresh_demo: tuple[Settings, Database],
) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """A client on a demo of the test's own (what it changes, no other test sees), and
    the accounts' API tokens by key."""
    settings, database = fresh_demo
    tokens = create_accounts(database)
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        yield client, tokens
