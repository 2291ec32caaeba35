"""Every public endpoint refuses a bad parameter by name, in the one error body, and the
pages say the same inline with the visitor's other choices kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.support.fakes import RecordingQueue

UNRELEASED = "2099-01-C0"


@pytest.fixture
def client(settings: Settings, database: Database) -> Iterator[TestClient]:
    with TestClient(create_app(settings, queue=RecordingQueue())) as c:
        yield c


@pytest.mark.parametrize(
    ("path", "params", "status", "field"),
    [
        ("/api/v1/results", {"cohort": UNRELEASED}, 422, "cohort"),
        ("/api/v1/results", {"cohort": "last week"}, 422, "cohort"),
        ("/api/v1/benchmarks", {"cohort": UNRELEASED}, 422, "cohort"),
        ("/api/v1/compare", [("submission", "nope1"), ("submission", "nope2")], 404, "submission"),
        ("/api/v1/compare", [("submission", "only-one")], 422, "submission"),
        ("/api/v1/history", {"organization": " ", "system": "S", "benchmark": "b"}, 422,
         "organization"),
        ("/api/v1/agentic", {"organization": ""}, 422, "organization"),
        ("/api/v1/agentic", {"organization": "Acme", "cohort": UNRELEASED}, 422, "cohort"),
        ("/api/v1/agentic", {"organization": "Acme", "status": "great"}, 422, "status"),
        (f"/api/v1/cohorts/{UNRELEASED}", {}, 404, "cohort_id"),
        ("/api/v1/cohorts/not-a-cohort", {}, 422, "cohort_id"),
        (f"/api/v1/cohorts/{UNRELEASED}/export", {}, 404, "cohort_id"),
    ],
)  # fmt: skip
def test_the_api_names_the_parameter(
    client: TestClient, path: str, params: object, status: int, field: str
) -> None:
    response = client.get(path, params=params)  # type: ignore[arg-type]
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["field"] == field and error["message"] and error["code"]


def test_the_pages_say_it_inline_and_keep_the_other_choices(client: TestClient) -> None:
    page = client.get("/results", params={"cohort": UNRELEASED, "benchmark": "llama3_1-8b"})
    assert (
        page.status_code == 422
        and f"no cohort &#39;{UNRELEASED}&#39; has been published" in page.text
    )
    history = client.get(
        "/history", params={"organization": "Acme Corp", "system": "", "benchmark": "llama3_1-8b"}
    )
    assert history.status_code == 422 and 'id="history-query"' in history.text
    assert 'value="Acme Corp"' in history.text and 'value="llama3_1-8b"' in history.text
    agentic = client.get("/agentic", params={"organization": "", "system": "Acme H200"})
    assert agentic.status_code == 422 and 'value="Acme H200"' in agentic.text
    compare = client.get("/compare", params=[("submission", "s-one"), ("submission", "s-two")])
    assert compare.status_code == 404 and 'id="compare-query"' in compare.text
    assert 'value="s-one" checked' in compare.text and 'value="s-two" checked' in compare.text
    embed = client.get("/embed/results", params={"cohort": UNRELEASED})
    assert embed.status_code == 422 and 'id="embed-error"' in embed.text
