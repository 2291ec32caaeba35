"""The home page leads with the latest cohort per benchmark; the submissions moved."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.db.models import Submission
from app.db.session import Database
from app.main import create_app
from app.review.services.ticks import advance_clocks
from app.settings import Settings
from tests.support.accounts import create_accounts
from tests.support.fakes import RecordingQueue
from tests.support.submissions import archive_of, finalize_unreviewed, pt, submit


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


def test_a_result_an_embargo_released_before_any_cohort_is_on_every_page(
    database: Database, settings: Settings, tmp_path: Path
) -> None:
    """An embargo can release a finalized result before the chair released any cohort:
    the API shows it, and so must the explorer, its embed and the home page (they said
    "No results have been published yet")."""
    create_accounts(database)
    sid = submit(database, settings, archive_of(tmp_path, "early"), embargo=dt.date(2026, 11, 9))
    with database.session() as session:
        submission = session.get(Submission, sid)
        assert submission is not None
        finalize_unreviewed(session, settings, submission, pt(2026, 11, 2))
        advance_clocks(session, settings, pt(2026, 11, 9, 8, 1))
        session.commit()
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        assert client.get("/api/v1/cohorts").json()["data"] == []
        api = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()
        [curve] = api["curves"]
        assert (curve["system"], curve["status"]) == ("Acme early", "verified")
        for path in ("/results", "/embed/results"):
            page = client.get(path, params={"benchmark": "llama3_1-8b"})
            assert page.status_code == 200 and 'id="results-data"' in page.text, path
            assert "No results have been published yet" not in page.text
        assert "current results" in client.get("/embed/results").text
        home = client.get("/").text
        assert home.count('<polyline class="step') == 1 and "Acme early (Acme Corp" in home
        assert 'href="/results?benchmark=llama3_1-8b"' in home
