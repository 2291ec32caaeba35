"""/embed/results: the chart of a public view, alone, the one page other sites may frame."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.fakes import RecordingQueue


@pytest.fixture
def client(demo_env: tuple[Settings, Database]) -> Iterator[TestClient]:
    settings, _database = demo_env
    with TestClient(create_app(settings, queue=RecordingQueue())) as c:
        yield c  # a fresh client: no cookie yet


def test_the_embed_draws_the_views_chart_with_no_cookie_or_form(client: TestClient) -> None:
    page = client.get("/embed/results", params={"benchmark": "llama3_1-8b", "workload": "batch"})
    assert page.status_code == 200
    assert "frame-ancestors *" in page.headers["content-security-policy"]
    assert "form-action 'none'" in page.headers["content-security-policy"]
    assert "set-cookie" not in page.headers
    assert "<form" not in page.text and 'id="chart-pareto"' in page.text
    assert 'id="results-data"' in page.text and "<header" not in page.text
    assert 'href="/results?benchmark=llama3_1-8b&amp;workload=batch"' in page.text


def test_every_other_page_refuses_to_be_framed(client: TestClient) -> None:
    page = client.get("/results")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "set-cookie" in page.headers  # the explorer's forms carry their token
    assert 'id="embed-code"' in page.text and "/embed/results?" in page.text


def test_a_refused_view_says_why_inside_the_frame(client: TestClient) -> None:
    page = client.get("/embed/results", params={"normalize": "usd_per_mtok"})
    assert page.status_code == 422 and 'id="embed-error"' in page.text
    assert "frame-ancestors *" in page.headers["content-security-policy"]
