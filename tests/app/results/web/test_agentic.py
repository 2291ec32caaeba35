"""The agentic models of one system or organisation on one chart, on the demo."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_an_organisations_agentic_curves_share_one_chart(client: TestClient) -> None:
    body = client.get("/api/v1/agentic", params={"organization": "Ember Compute"}).json()
    assert body["organization"] == "Ember Compute" and body["system"] is None
    assert [c["benchmark"] for c in body["curves"]] == ["kimi-k3"]
    assert all(p["e2e_avg_interactivity"] for c in body["curves"] for p in c["points"])
    page = client.get(
        "/agentic", params={"organization": "ember compute", "system": "Ember GB200 x4"}
    )
    assert page.status_code == 200 and 'id="curves-data"' in page.text
    assert "e2e avg interactivity" in page.text  # the chart's x axis
    ranking = client.get("/results", params={"benchmark": "kimi-k3"}).text
    assert "/agentic?organization=Ember%20Compute" in ranking


def test_no_agentic_curve_is_said_so(client: TestClient) -> None:
    response = client.get("/api/v1/agentic", params={"organization": "Fjord Labs"})
    assert response.status_code == 422 and "no agentic curve" in response.json()["error"]["message"]
    assert response.json()["error"]["field"] == "organization"


def test_a_systems_first_model_is_drawn_in_the_systems_own_colour(client: TestClient) -> None:
    import json
    import re

    from app.results.domain.colours import PALETTE, preferred, system_key

    page = client.get("/agentic", params={"organization": "Ember Compute"}).text
    found = re.search(r'<script type="application/json" id="curves-data">(.*?)</script>', page)
    assert found is not None
    [curve] = json.loads(found.group(1))["curves"]
    # Ember's colour wherever Ember is drawn, not another system's.
    assert curve["colour"] == PALETTE[preferred(system_key("Ember Compute", "Ember GB200 x4"))]
    # The table's figures are written as every page writes them (thousands grouped).
    best = max(p["y"] for p in curve["points"])
    assert f"{best:,.1f}" in page
