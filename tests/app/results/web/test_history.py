"""GET /api/v1/history and /history on the demo: a result that went provisional → verified."""

from __future__ import annotations

from fastapi.testclient import TestClient

ACME = {"organization": "Acme Corp", "system": "Acme H200 x8", "benchmark": "llama3_1-8b"}


def test_the_api_tells_each_version_with_its_cohorts_status_and_result_id(
    client: TestClient,
) -> None:
    body = client.get("/api/v1/history", params=ACME).json()
    statuses = [(e["first_cohort"], e["status"]) for e in body["entries"]]
    assert statuses == [("2026-10-C1", "provisional"), ("2026-11-C0", "verified")]
    assert body["entries"][1]["cohorts"] == ["2026-11-C0", "2026-11-C1"]
    assert all(e["result_id"] for e in body["entries"])
    assert body["entries"][1]["changes"] == []  # the same bundle, only its status moved


def test_the_page_draws_it_and_the_ranking_links_to_it(client: TestClient) -> None:
    page = client.get("/history", params=ACME)
    assert page.status_code == 200 and 'id="curves-data"' in page.text
    assert page.text.count("<tr>\n      <td>") == 2 and "no disclosure changed" in page.text
    ranking = client.get("/results", params={"benchmark": "llama3_1-8b"}).text
    assert "/history?organization=Acme%20Corp&amp;system=Acme%20H200%20x8" in ranking
    missing = client.get("/api/v1/history", params={**ACME, "system": "Nobody"})
    assert missing.status_code == 422 and missing.json()["error"]["field"] == "system"
    assert client.get("/history", params={**ACME, "system": "Nobody"}).status_code == 422
