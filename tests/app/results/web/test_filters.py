"""The explorer's system filters as a first-time visitor types them (issue 48)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_an_organisation_is_found_by_part_of_its_name_in_any_case(client: TestClient) -> None:
    whole = client.get("/api/v1/results", params={"organization": "Acme Corp"}).json()
    part = client.get("/api/v1/results", params={"organization": "acme"}).json()
    assert whole["curves"] and {c["organization"] for c in whole["curves"]} == {"Acme Corp"}
    assert [c["id"] for c in part["curves"]] == [c["id"] for c in whole["curves"]]


def test_a_view_no_result_matches_says_which_filter_and_draws_nothing(client: TestClient) -> None:
    page = client.get("/results", params={"organization": "Nobody Ltd", "accelerator": "TPU"})
    assert page.status_code == 200
    text = page.text
    assert 'id="no-curves"' in text
    assert "organisation “Nobody Ltd”, accelerator “TPU”" in text
    # No empty chart with made-up axes, no word of an SLA nobody set.
    assert 'id="chart-pareto"' not in text and 'id="no-ranking"' not in text
