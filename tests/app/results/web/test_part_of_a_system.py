"""A point that ran on part of its system (nodes_used engaged one node of two, §4.5.3) is
published with that part, and the buyer's cost, per-accelerator throughput and sizing
count that part, not the whole system."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.db.models import Submission
from app.db.session import Database
from app.demo.bundles import BundleFactory, SystemSpec
from app.main import create_app
from app.review.services.releases import publish_cohort
from app.settings import Settings
from tests.support.bundles import one_node_at_r8
from tests.support.fakes import RecordingQueue
from tests.support.submissions import finalize_unreviewed, pt, submit


@pytest.fixture
def client(database: Database, settings: Settings, tmp_path: Path) -> Iterator[TestClient]:
    system = SystemSpec(name="Acme two nodes", nodes=2, accelerators_per_node=8)
    archive = BundleFactory(system=system, submission_id="sub-two").archive(
        tmp_path / "two.tar.gz", edits=(one_node_at_r8,)
    )
    sid = submit(database, settings, archive)
    with database.session() as session:
        submission = session.get(Submission, sid)
        assert submission is not None
        finalize_unreviewed(session, settings, submission, pt(2026, 12, 7))
        publish_cohort(session=session, settings=settings, cohort_id="2026-12-C1",
                       at=pt(2026, 12, 16, 8))  # fmt: skip
        session.commit()
    with TestClient(create_app(settings, queue=RecordingQueue())) as client:
        yield client


def _points(client: TestClient, **params: str) -> dict[str, dict[str, Any]]:
    response = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b", **params})
    assert response.status_code == 200, response.text
    [curve] = response.json()["curves"]
    return {p["dir"]: p for p in curve["points"]}


def test_the_part_is_published_and_priced_as_that_part(client: TestClient) -> None:
    points = _points(client, normalize="usd_per_mtok", price_per_accelerator_hour="3")
    half, whole = points["r8"], points["r16"]
    assert half["engaged"]["share"] == 0.5 and half["engaged"]["accelerators"] == 8
    assert half["engaged"]["power_kw"] == pytest.approx(
        whole["system_tps"] / whole["system_tps_per_kw"] / 2, rel=1e-3
    )
    assert "engaged" not in whole  # the whole system: nothing to say
    # $3 an accelerator-hour: 8 accelerators for r8, the system's 16 for r16.
    for point, accelerators in ((half, 8), (whole, 16)):
        per_hour = 3 * accelerators
        expected = per_hour / (point["system_tps"] * 3600 / 1e6)
        assert point["usd_per_million_tokens"] == pytest.approx(expected, rel=1e-3)
    per_system = _points(client, normalize="usd_per_mtok", price_per_system_hour="40")
    assert per_system["r8"]["usd_per_million_tokens"] == pytest.approx(
        20 / (half["system_tps"] * 3600 / 1e6), rel=1e-3
    )
    per_accelerator = _points(client, normalize="accelerator")
    assert per_accelerator["r8"]["y"] == pytest.approx(half["system_tps"] / 8, rel=1e-3)
    assert per_accelerator["r16"]["y"] == pytest.approx(whole["system_tps"] / 16, rel=1e-3)


def test_a_sizing_on_the_part_counts_copies_of_the_part(client: TestClient) -> None:
    points = _points(client)
    # A per-user floor that r8 meets and r16 does not: the sizing rests on r8.
    floor = (points["r8"]["tps_per_user"] + points["r16"]["tps_per_user"]) / 2
    response = client.get("/api/v1/plan", params={
        "benchmark": "llama3_1-8b", "users": "100", "tps_per_user_min": f"{floor:.3f}",
        "price_per_accelerator_hour": "2.50",
    })  # fmt: skip
    assert response.status_code == 200, response.text
    [row] = response.json()["rows"]
    assert (row["point"], row["engaged_share"]) == ("r8", 0.5)
    assert row["systems_needed"] == 13  # ⌈100 / 8⌉ copies of one node
    assert row["accelerators"] == 13 * 8
    assert row["usd_per_hour"] == pytest.approx(13 * 8 * 2.5)
    assert row["provisioned_kw"] == pytest.approx(
        13 * points["r8"]["engaged"]["power_kw"], rel=1e-3
    )
    page = client.get("/plan", params={
        "benchmark": "llama3_1-8b", "users": "100", "tps_per_user_min": f"{floor:.3f}",
    })  # fmt: skip
    assert "× 50% of the nodes" in page.text


def test_the_submission_page_says_the_point_ran_on_part_of_the_system(
    client: TestClient,
) -> None:
    [curve] = client.get("/api/v1/results", params={"benchmark": "llama3_1-8b"}).json()["curves"]
    page = client.get(f"/submissions/{curve['submission']}").text
    assert page.count('class="muted small engaged"') == 1
    assert "on 50% of the nodes, 8 accelerators" in page
