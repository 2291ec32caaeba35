"""A submission's page as its submitter reads it."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.db.session import Database
from app.pipeline import run_checks
from app.settings import Settings
from tests.support.bundles import upload
from tests.support.fakes import RecordingQueue


def test_the_findings_follow_the_verdict_and_its_counts_lead_to_them(
    client: TestClient,
    settings: Settings,
    database: Database,
    queue: RecordingQueue,
    good_archive: Path,
) -> None:
    """Issue 48: the findings came after the review, the system description and the
    timeline, far down the page, and the verdict's counts did not lead to them."""
    body = upload(client, good_archive.read_bytes(), for_review="true").json()
    with database.session() as session:
        run_checks(session=session, settings=settings, job_id=queue.sent[0][0])
    page = client.get(f"/submissions/{body['id']}").text
    assert 'id="review"' in page  # in its review weeks: the review section is there too
    order = [page.index(marker) for marker in ('id="status"', 'id="findings"', 'id="review"')]
    assert order == sorted(order)
    assert '<a class="counts" id="counts" href="#findings">' in page
    # Its bundle carries no events: the page says that nothing of it is re-counted.
    assert 'id="no-events"' in page and "none is re-counted" in page
