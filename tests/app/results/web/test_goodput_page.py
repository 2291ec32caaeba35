"""The explorer asked for goodput where no point was published with events."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.pipeline import run_checks
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.fakes import RecordingQueue
from tests.support.submissions import CHECKED, accept, pt


def test_a_view_without_events_says_there_is_no_goodput(
    settings: Settings, database: Database, good_archive: Path
) -> None:
    queue = RecordingQueue()
    accept(database, settings, queue, good_archive, for_review=False)
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[-1][0],
                   clock=lambda: CHECKED)  # fmt: skip
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C0",
                       at=pt(2026, 12, 2, 9))  # fmt: skip
        session.commit()
    query = {"benchmark": "llama3_1-8b", "status": "unverified", "ttft_p90_max_ms": "300"}
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        page = client.get("/results", params={**query, "rank_by": "goodput"})
        api = client.get("/api/v1/results", params={**query, "rank_by": "goodput"}).json()
    assert page.status_code == 200
    assert 'id="no-goodput"' in page.text
    assert "Nothing to rank: no point has re-counted events." in page.text
    assert api["ranking"] == [] and api["goodput"] is True
    fixed = [p for p in api["curves"][0]["points"] if p["offline"] != "dedicated"]
    assert fixed and all(p["goodput_missing"] for p in fixed)
