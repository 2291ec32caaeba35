"""The home page leads with the latest cohort per benchmark; the submissions moved."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.settings import Settings
from app.web.main import create_app
from tests.support.fakes import RecordingQueue


@pytest.fixture(scope="module")
def client(demo_env: tuple[Settings, Database]) -> Iterator[TestClient]:
    settings, _database = demo_env
    with TestClient(create_app(settings, queue=RecordingQueue())) as c:
        yield c


def test_the_home_page_previews_every_benchmark_of_the_latest_cohort(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    cohort = client.get("/api/v1/cohorts").json()["data"][0]["id"]
    assert f'id="latest-cohort">{cohort}<' in page.text
    benchmarks = {b["id"] for b in client.get("/api/v1/benchmarks").json()["data"]}
    shown = set(re.findall(r'data-benchmark="([^"]+)"', page.text))
    assert shown == benchmarks
    for benchmark in benchmarks:
        assert f'href="/results?benchmark={benchmark}&amp;cohort={cohort}"' in page.text
    # Each preview draws the explorer's own curves: one line per curve of that view.
    view = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b", "cohort": cohort})
    preview = page.text.split('data-benchmark="llama3_1-8b"')[1].split("</a>")[0]
    assert preview.count("<polyline") == len(view.json()["curves"])
    assert view.json()["ranking"][0]["system"] in preview
    # The four steps, with the workloads linked.
    assert page.text.count("<li><strong>") == 4
    assert 'href="/results?workload=interactive"' in page.text


def test_the_submissions_table_has_its_own_page(client: TestClient) -> None:
    page = client.get("/submissions")
    assert page.status_code == 200 and 'id="submissions"' in page.text
    assert client.get("/submissions/", follow_redirects=False).status_code in (307, 308)
    assert 'href="/submissions">Submissions</a>' in client.get("/").text  # in the header
